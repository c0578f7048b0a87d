"""``GraphCaptureScope``: capture a region into a ``BreakableGraph``, joining forks before closes.

Rule D10 (seed 000): the scope owns the set of side queues forked since the current segment opened
and joins EVERY outstanding one before EVERY segment close (a PIECEWISE break or the exit), because
closing a capture with an unjoined fork fails at end-capture. A model tells the scope about its fork
with ``note_fork(side)`` and, when it joins by itself, ``note_join(side)``.

Worked example (PIECEWISE, one break, a fork the model forgot to join)::

    with GraphCaptureScope(b, q, g, PIECEWISE) as s:   # begin_capture
        ev = b.record_event(q); b.wait_event(side, ev)  # the fork
        s.note_fork(side)                               # forks_tracked = 1
        s.break_point(f)    # record_event(side) wait_event(q) end_capture ; f() ; begin_capture
                            # forks_auto_joined = 1, segments_captured = 1, breaks = 1
    # exit: end_capture -> segments_captured = 2

A scope is INERT (runs its body eagerly, captures nothing) when ``cudagraph_enabled()`` is false or
the backend cannot capture. A body that raises: the capture is aborted, the partial graph destroyed,
and the ORIGINAL error propagates (a secondary error from the abort is kept on ``secondary_error``).
"""

from __future__ import annotations

import contextlib
import contextvars
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import torch
from torch.utils._pytree import tree_leaves

from seam.errors import BreakResultError, CaptureStateError
from seam.mode import CaptureMode
from seam.monitor import preparing
from seam.stats import bump
from seam.switches import cudagraph_enabled

if TYPE_CHECKING:
    from seam.backend import Backend, Queue
    from seam.graph import BreakableGraph

T = TypeVar("T")
_current: contextvars.ContextVar["GraphCaptureScope | None"] = contextvars.ContextVar("seam_scope", default=None)


class GraphCaptureScope:
    """A context manager that captures its body into ``graph`` on ``queue``."""

    def __init__(self, backend: "Backend", queue: "Queue", graph: "BreakableGraph", mode: CaptureMode | None = None):
        self.backend = backend
        self.queue = queue
        self.graph = graph
        self.mode = graph.mode if mode is None else mode
        if self.mode is not graph.mode:
            raise CaptureStateError(f"scope mode {self.mode.name} differs from the graph's {graph.mode.name}")
        #: True when the body runs eagerly and nothing is captured.
        self.inert = False
        #: An error raised while aborting a failed capture (never replaces the body's error).
        self.secondary_error: BaseException | None = None
        self._outstanding: dict[int, "Queue"] = {}
        self._stack = contextlib.ExitStack()
        self._token: contextvars.Token[Any] | None = None

    # -- entering and leaving ------------------------------------------------------------------
    def __enter__(self) -> "GraphCaptureScope":
        if self.graph.captured or self.graph.destroyed:
            state = "destroyed" if self.graph.destroyed else "already captured"
            raise CaptureStateError(f"a capture into a graph that is {state}: a BreakableGraph is captured once "
                                    "(CUDA: a CUDAGraph already owning a graph refuses a second capture); make a new one")
        self.inert = not (cudagraph_enabled() and self.backend.can_capture)
        self._token = _current.set(self)
        if self.inert:
            bump("inert_scopes")
            return self
        self._stack.enter_context(preparing())
        self._stack.enter_context(self.backend.use_queue(self.queue))
        try:
            self._open_segment()
        except BaseException:
            self._leave()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> bool:
        try:
            if self.inert:
                return False
            if exc is None:
                try:
                    self._close_segment()
                except BaseException:
                    self._abort()
                    raise
                self.graph.captured = True
            else:
                self._abort()
        finally:
            self._leave()
        return False

    def _leave(self) -> None:
        if self._token is not None:
            _current.reset(self._token)
            self._token = None
        self._stack.close()

    # -- segments ------------------------------------------------------------------------------
    def _open_segment(self) -> None:
        self.backend.begin_capture(self.queue, self.graph.pool)

    def _close_segment(self) -> None:
        self._join_outstanding_forks()
        self.graph.add_segment(self.backend.end_capture(self.queue))
        bump("segments_captured")

    def _join_outstanding_forks(self) -> None:
        """D10: join every side queue forked since the segment opened, before it closes."""
        for side in list(self._outstanding.values()):
            self.backend.wait_event(self.queue, self.backend.record_event(side))
            bump("forks_auto_joined")
        self._outstanding.clear()

    def _abort(self) -> None:
        try:
            self.backend.abort_capture(self.queue)
            self.graph.destroy()
        except Exception as err:  # never let a cleanup error replace the body's error
            self.secondary_error = err

    # -- what the body calls -------------------------------------------------------------------
    def note_fork(self, side: "Queue") -> None:
        """The body forked ``side`` off the capturing queue; track it until joined."""
        if self.inert or side.id in self._outstanding:
            return
        self._outstanding[side.id] = side
        bump("forks_tracked")

    def note_join(self, side: "Queue") -> None:
        """The body joined ``side`` back itself; the scope has nothing left to join for it."""
        self._outstanding.pop(side.id, None)

    def break_point(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` at a break point: inline in FULL (captured), eagerly between segments in PIECEWISE."""
        if self.inert or self.mode is CaptureMode.FULL:
            return fn()
        self._close_segment()
        bump("breaks")
        self.graph.add_break(fn)
        result = fn()
        if any(isinstance(leaf, torch.Tensor) for leaf in tree_leaves(result)):
            raise BreakResultError(
                "a PIECEWISE break returned a tensor: the next segment would bake the address of memory freed "
                "after capture, and each replay's result lands elsewhere; copy it into a buffer allocated before "
                "the capture (backend.copy) and return nothing")
        self._open_segment()
        return result


def current_scope() -> GraphCaptureScope | None:
    """The innermost open scope, or ``None`` (eager code outside any scope)."""
    return _current.get()


def break_point(fn: Callable[[], T]) -> T:
    """A break point in model code: defers to the open scope, or just runs ``fn`` outside one."""
    scope = current_scope()
    return fn() if scope is None else scope.break_point(fn)


def note_fork(side: "Queue") -> None:
    """Tell the open scope (if any) that ``side`` was forked off its queue."""
    scope = current_scope()
    if scope is not None:
        scope.note_fork(side)


def note_join(side: "Queue") -> None:
    """Tell the open scope (if any) that ``side`` was joined back."""
    scope = current_scope()
    if scope is not None:
        scope.note_join(side)
