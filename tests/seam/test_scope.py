"""The capture scope's rules, each asserted as a counter or as an order in one backend trace."""

from __future__ import annotations

import pytest

from seam import (
    Backend,
    BreakableGraph,
    CaptureMode,
    CaptureStateError,
    GraphCaptureScope,
    get_graph_break_stats,
)

CAPTURE_OPS = {"begin_capture", "record_event", "wait_event", "end_capture"}


def _fork(backend: Backend, origin, side) -> None:
    backend.wait_event(side, backend.record_event(origin))


def _join(backend: Backend, origin, side) -> None:
    backend.wait_event(origin, backend.record_event(side))


def _capture_ops(backend: Backend) -> list[str]:
    return [op for op in backend.trace_ops() if op in CAPTURE_OPS]


def test_the_scope_joins_an_outstanding_fork_before_the_close(backend: Backend) -> None:
    q, side = backend.default_queue(), backend.new_queue()
    x = backend.alloc((4,))
    with GraphCaptureScope(backend, q, BreakableGraph(backend, CaptureMode.FULL)) as scope:
        _fork(backend, q, side)
        scope.note_fork(side)
        with backend.use_queue(side):
            x.add_(1)
        backend.trace.clear()  # keep only what the scope does from here on
    # One backend trace: the join (record on side, wait on origin) comes BEFORE the close.
    assert _capture_ops(backend) == ["record_event", "wait_event", "end_capture"]
    joined = backend.trace[0], backend.trace[1]
    assert joined[0].queue == side.id and joined[1].queue == q.id
    stats = get_graph_break_stats()
    assert (stats.forks_tracked, stats.forks_auto_joined, stats.segments_captured) == (1, 1, 1)


def test_the_whole_trace_reads_begin_fork_join_end(backend: Backend) -> None:
    q, side = backend.default_queue(), backend.new_queue()
    with GraphCaptureScope(backend, q, BreakableGraph(backend)) as scope:
        _fork(backend, q, side)
        scope.note_fork(side)
    assert _capture_ops(backend) == ["begin_capture", "record_event", "wait_event", "record_event", "wait_event", "end_capture"]


def test_a_body_that_joins_its_fork_itself_leaves_forks_auto_joined_at_zero(backend: Backend) -> None:
    q, side = backend.default_queue(), backend.new_queue()
    with GraphCaptureScope(backend, q, BreakableGraph(backend)) as scope:
        _fork(backend, q, side)
        scope.note_fork(side)
        _join(backend, q, side)
        scope.note_join(side)
    stats = get_graph_break_stats()
    assert (stats.forks_tracked, stats.forks_auto_joined, stats.segments_captured) == (1, 0, 1)


def test_re_registering_one_queue_is_tracked_once(backend: Backend) -> None:
    q, side = backend.default_queue(), backend.new_queue()
    with GraphCaptureScope(backend, q, BreakableGraph(backend)) as scope:
        _fork(backend, q, side)
        scope.note_fork(side)
        scope.note_fork(side)
    stats = get_graph_break_stats()
    assert (stats.forks_tracked, stats.forks_auto_joined) == (1, 1)


def test_full_mode_has_exactly_one_segment_and_captures_breaks_inline(backend: Backend) -> None:
    q = backend.default_queue()
    graph = BreakableGraph(backend, CaptureMode.FULL)
    calls = []
    with GraphCaptureScope(backend, q, graph) as scope:
        for i in range(3):
            scope.break_point(lambda i=i: calls.append(i))
    assert len(graph.segments) == 1 and graph.breaks == []
    stats = get_graph_break_stats()
    assert (stats.segments_captured, stats.breaks) == (1, 0)
    graph.replay(q)
    assert calls == [0, 1, 2], "FULL captures the break inline: host code in it is not re-run at replay"


@pytest.mark.parametrize("k", [1, 3])
def test_piecewise_with_k_breaks_has_k_plus_one_segments_and_replays_breaks_in_order(backend: Backend, k: int) -> None:
    q = backend.default_queue()
    graph = BreakableGraph(backend, CaptureMode.PIECEWISE)
    order: list[str] = []
    x = backend.alloc((2,))
    with GraphCaptureScope(backend, q, graph) as scope:
        for i in range(k):
            x.add_(1)
            scope.break_point(lambda i=i: order.append(f"break{i}"))
        x.add_(1)
    assert len(graph.segments) == k + 1 and len(graph.breaks) == k
    assert get_graph_break_stats().segments_captured == k + 1
    assert get_graph_break_stats().breaks == k
    order.clear()
    graph.replay(q)
    assert order == [f"break{i}" for i in range(k)]
    ops = [op for op in backend.trace_ops() if op == "replay"]
    assert len(ops) == k + 1


def test_a_body_that_raises_propagates_the_original_error_and_destroys_the_partial_graph(backend: Backend) -> None:
    q = backend.default_queue()
    graph = BreakableGraph(backend, CaptureMode.PIECEWISE)

    class ModelBug(Exception):
        pass

    with pytest.raises(ModelBug, match="the original"):
        with GraphCaptureScope(backend, q, graph) as scope:
            backend.alloc((2,)).add_(1)
            scope.break_point(lambda: None)  # one segment already closed: the graph is partial
            raise ModelBug("the original")
    assert graph.destroyed and not graph.captured
    assert "abort_capture" in backend.trace_ops() and "destroy" in backend.trace_ops()
    assert not backend.capturing
    with pytest.raises(CaptureStateError):
        graph.replay(q)

