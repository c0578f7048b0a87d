"""The pace of Python's automatic collector while an emulated capture is open.

A GPU's capture records each operation in CUDA and leaves about one new Python object behind it (its output); the
emulator's recorder keeps about twenty (the recorded call, its baked arguments, the aliases a replay writes): measured
by ``python scripts/gc_objects_per_op.py``, 18 to 19 tracked objects a recorded operation against 2 run eagerly. The automatic
collector runs by that count, so inside an emulated capture it ran about ten times as often as in the GPU's process,
and it collects what an earlier step left in reference cycles, a CUDA graph among them (``make_graphed_callables``
leaves its graphs so), whose release CUDA refuses inside a capture by invalidating it (the corpus's
``raw_gc_other_graph_in_cycle``). PyTorch's own ``test_cuda.py`` in file order showed it: two
``make_graphed_callables`` cases passed on the H100 and failed emulated (session 24). While a capture is open the
first generation's threshold is ``PACE`` times what it was (restored when the last capture closes, unless the program
set another meanwhile), so the collector runs there about as often as it would on a GPU; an explicit
``gc.collect()`` runs as ever, and ``gc.isenabled()`` says what it said.
"""

from __future__ import annotations

import gc

#: How many times as many objects the recorder keeps per operation as a GPU's capture does (rounded up).
PACE = 20
#: [(the thresholds before, the thresholds set)] while a capture is open; empty otherwise.
_SAVED: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
#: The largest threshold ``gc.set_threshold`` takes (a C int).
_MOST = 2**31 - 1


def capture_opened(open_captures: int) -> None:
    """A capture began; ``open_captures`` are open now (it among them)."""
    if open_captures != 1 or _SAVED:
        return
    before = gc.get_threshold()
    slowed = (min(before[0] * PACE, _MOST), *before[1:])  # 0 (no automatic collection) stays 0
    gc.set_threshold(*slowed)
    _SAVED.append((before, slowed))


def capture_closed(open_captures: int) -> None:
    """A capture ended or was refused; ``open_captures`` are still open."""
    if open_captures or not _SAVED:
        return
    before, slowed = _SAVED.pop()
    if gc.get_threshold() == slowed:  # the program's own setting, made meanwhile, stays
        gc.set_threshold(*before)


def reset() -> None:
    """Leaving the emulation, or a fresh device: the thresholds as they were."""
    while _SAVED:
        capture_closed(0)
