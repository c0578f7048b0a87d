"""A graph's life as its user sees it: captured once, into its one pool, in the scope's own mode.

A ``BreakableGraph`` is captured exactly once (as a CUDA graph is): a second capture into it, or one
into a destroyed graph, is refused with a message naming its state and the fix; a scope built in a
mode other than its graph's is refused before it opens; every segment captures into the graph's
one memory pool, and a backend that cannot capture is never asked for one.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from seam import (
    Backend,
    BreakableGraph,
    CaptureMode,
    CaptureStateError,
    EagerBackend,
    EmulatedBackend,
    GraphCaptureScope,
    current_scope,
    get_graph_break_stats,
)

SECOND_CAPTURE = ("a capture into a graph that is {state}: a BreakableGraph is captured once (CUDA: a CUDAGraph "
                  "already owning a graph refuses a second capture); make a new one")


def captured_increment(backend: Backend) -> tuple[BreakableGraph, torch.Tensor]:
    x = backend.to_device(torch.tensor([1.0]))
    g = BreakableGraph(backend, CaptureMode.FULL)
    with GraphCaptureScope(backend, backend.default_queue(), g):
        x.add_(1)
    return g, x


def test_a_fresh_graph_is_neither_captured_nor_destroyed_and_a_capture_marks_it_captured(backend: Backend) -> None:
    g = BreakableGraph(backend, CaptureMode.FULL)
    assert g.captured is False and g.destroyed is False
    with GraphCaptureScope(backend, backend.default_queue(), g):
        pass
    assert g.captured is True and g.destroyed is False


def test_a_second_capture_into_a_captured_graph_is_refused_and_the_first_still_replays(backend: Backend) -> None:
    g, x = captured_increment(backend)
    with pytest.raises(CaptureStateError) as refused:
        with GraphCaptureScope(backend, backend.default_queue(), g):
            x.mul_(100)
    assert str(refused.value) == SECOND_CAPTURE.format(state="already captured")
    assert current_scope() is None and not backend.capturing
    assert len(g.segments) == 1 and get_graph_break_stats().segments_captured == 1
    g.replay()
    backend.synchronize()
    assert x.cpu().item() == 2.0  # the first capture's add, not the refused multiply


def test_a_capture_into_a_destroyed_graph_is_refused_naming_it_destroyed(backend: Backend) -> None:
    g, _ = captured_increment(backend)
    g.destroy()
    with pytest.raises(CaptureStateError) as refused:
        with GraphCaptureScope(backend, backend.default_queue(), g):
            pass
    assert str(refused.value) == SECOND_CAPTURE.format(state="destroyed")
    assert current_scope() is None and not backend.capturing


def test_a_capture_into_a_graph_destroyed_before_its_capture_is_refused_naming_it_destroyed(backend: Backend) -> None:
    g = BreakableGraph(backend, CaptureMode.FULL)
    g.destroy()
    with pytest.raises(CaptureStateError) as refused:
        with GraphCaptureScope(backend, backend.default_queue(), g):
            pass
    assert str(refused.value) == SECOND_CAPTURE.format(state="destroyed")


@pytest.mark.parametrize(("scope_mode", "graph_mode"), [(CaptureMode.PIECEWISE, CaptureMode.FULL),
                                                        (CaptureMode.FULL, CaptureMode.PIECEWISE)])
def test_a_scope_in_another_mode_than_its_graph_is_refused_before_it_opens(
        backend: Backend, scope_mode: CaptureMode, graph_mode: CaptureMode) -> None:
    g = BreakableGraph(backend, graph_mode)
    with pytest.raises(CaptureStateError) as refused:
        GraphCaptureScope(backend, backend.default_queue(), g, scope_mode)
    assert str(refused.value) == f"scope mode {scope_mode.name} differs from the graph's {graph_mode.name}"
    assert not backend.capturing and not g.captured


@pytest.mark.parametrize("mode", [CaptureMode.FULL, CaptureMode.PIECEWISE])
def test_a_scope_takes_its_graphs_mode_when_none_is_given_and_accepts_the_same_mode(backend: Backend,
                                                                                    mode: CaptureMode) -> None:
    g = BreakableGraph(backend, mode)
    assert GraphCaptureScope(backend, backend.default_queue(), g).mode is mode
    assert GraphCaptureScope(backend, backend.default_queue(), g, mode).mode is mode


def test_a_scope_not_yet_entered_is_not_inert_and_has_no_secondary_error() -> None:
    scope = GraphCaptureScope(EmulatedBackend(), EmulatedBackend().default_queue(), BreakableGraph(EmulatedBackend()))
    assert scope.inert is False and scope.secondary_error is None


# ---- the graph's one memory pool ---------------------------------------------------------
class PoolLedger(EmulatedBackend):
    """The emulator, with a pool object per ``new_pool`` and the pool every ``begin_capture`` got."""

    def __init__(self) -> None:
        super().__init__()
        self.pools_made: list[object] = []
        self.pools_captured_into: list[Any] = []

    def new_pool(self) -> Any:
        pool = object()
        self.pools_made.append(pool)
        return pool

    def begin_capture(self, queue, pool: Any = None) -> None:
        self.pools_captured_into.append(pool)
        super().begin_capture(queue, pool)


def test_every_segment_of_a_piecewise_graph_captures_into_the_graphs_one_pool() -> None:
    backend = PoolLedger()
    g = BreakableGraph(backend, CaptureMode.PIECEWISE)
    with GraphCaptureScope(backend, backend.default_queue(), g) as scope:
        scope.break_point(lambda: None)
        scope.break_point(lambda: None)
    assert len(backend.pools_made) == 1 and g.pool is backend.pools_made[0]
    assert len(backend.pools_captured_into) == 3
    assert all(pool is g.pool for pool in backend.pools_captured_into)


class CountsPools(EagerBackend):
    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def new_pool(self) -> Any:
        self.asked += 1
        return object()


def test_a_backend_that_cannot_capture_is_never_asked_for_a_pool() -> None:
    backend = CountsPools()
    g = BreakableGraph(backend, CaptureMode.FULL)
    assert g.pool is None and backend.asked == 0
