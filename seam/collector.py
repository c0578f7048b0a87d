"""The collector guard: while any capture is open, no graph (nor its memory) is released.

CUDA's default capture mode is GLOBAL: while one stream captures, "unsafe" calls from anywhere in
the process are refused and INVALIDATE the open capture. Destroying a graph's executable is one of
them (measured on the H200, ``tests/fidelity/raw_cuda.py``: ``reset_other_graph``, ``del_other_graph``
and ``gc_other_graph_in_cycle`` all end in "operation failed due to a previous error during
capture"). Python's cyclic collector can run at any allocation and finalize a graph of an EARLIER
capture that sits in a reference cycle, so a capture fails or not depending on when the collector
happened to run: the CUDA arm went red in an order-dependent way (issue 8).

The guarantee, for every backend in the process:

* the collector runs (``gc.collect()``) BEFORE the first capture opens, so garbage from earlier
  work is released while that is still allowed (``torch.cuda.graph`` does the same);
* while a capture is open the automatic collector is OFF, and it is restored exactly as it was
  (enabled or not) when the last capture closes, however it closes;
* a release that still happens meanwhile (an explicit ``destroy()``, a ``gc.collect()`` in the
  captured body, a reference dropped to zero) is DEFERRED: the graph cannot replay any more, and its
  native release runs right after the last open capture closes.

Without the guard, a release during a capture is what CUDA's global mode refuses: the open captures
are invalidated (``note_unsafe_call``), which the CPU emulator turns into ``CaptureInvalidatedError``
at the close, exactly as CUDA does, so the bug shows with no GPU.
"""

from __future__ import annotations

import gc
import threading
from typing import Callable, Protocol


class OpenCapture(Protocol):
    """What the guard needs of an open capture: a way to mark it invalidated (first reason wins)."""

    def invalidate(self, reason: str) -> None: ...


class _Guard:
    """Process-wide state: the open captures, the collector's prior state, the deferred releases."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        #: Open captures of every backend in the process, in opening order.
        self.open: list[OpenCapture] = []
        #: Whether releases are being held back (true while the guard is engaged).
        self.holding = False
        #: Whether the automatic collector was enabled before the first capture opened.
        self.was_enabled = True
        #: Native releases waiting for the last capture to close, in the order they were asked for.
        self.deferred: list[Callable[[], None]] = []

    def engage(self) -> None:
        """The first capture is about to open: collect now, then keep the collector off."""
        gc.collect()
        self.was_enabled = gc.isenabled()
        gc.disable()
        self.holding = True

    def disengage(self) -> None:
        """The last capture closed: run the deferred releases, then restore the collector."""
        releases, self.deferred = self.deferred, []
        self.holding = False
        try:
            for release in releases:
                release()
        finally:
            if self.was_enabled:
                gc.enable()


_guard = _Guard()


def capture_opening(capture: OpenCapture) -> None:
    """Register ``capture`` as open (call BEFORE the native begin; pair with ``capture_closed``)."""
    with _guard.lock:
        if not _guard.open:
            _guard.engage()
        _guard.open.append(capture)


def capture_closed(capture: OpenCapture) -> None:
    """``capture`` is closed (ended, aborted, or its begin failed); the last one disengages the guard."""
    with _guard.lock:
        if capture in _guard.open:
            _guard.open.remove(capture)
        if not _guard.open and (_guard.holding or _guard.deferred):
            _guard.disengage()


def any_capture_open() -> bool:
    """Whether any capture of any backend is open in this process (CUDA's global capture mode)."""
    return bool(_guard.open)


def note_unsafe_call(what: str) -> None:
    """An unsafe call ran while captures were open: each open capture is invalidated, naming it."""
    for capture in list(_guard.open):
        capture.invalidate(what)


def release(what: str, native_release: Callable[[], None]) -> bool:
    """Release a graph's native resources now, or after the last open capture closes.

    Returns True when the release ran now. ``what`` names the graph in an invalidation message.
    """
    with _guard.lock:
        if _guard.holding and _guard.open:
            _guard.deferred.append(native_release)
            return False
    if _guard.open:
        note_unsafe_call(f"release of {what}")
    native_release()
    return True


def deferred_releases() -> int:
    """How many native releases wait for the open captures to close."""
    return len(_guard.deferred)
