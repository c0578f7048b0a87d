"""Every public backend call is counted in ``backend.stats`` and appended to ``backend.trace``, in issue order.

This is what a rule asserted "as a counter or as an ORDER of backend calls" reads (``seam.backend``):
each call leaves ONE trace entry naming the call, the queue it was issued on (``None`` for a call
that has none: an allocation, a host synchronize, a destroy) and its detail (the event and the queue
it came from, the bytes copied, the graph replayed or destroyed); an allocation, a copy, a launch
outside capture, a replay and a synchronize each add exactly one to their counter; a launch inside
a capture is recorded into the graph, not counted, and leaves no entry of its own. ``launch`` hands
every positional and keyword argument to the forward and returns its result.
"""

from __future__ import annotations

import torch

from seam import Backend


def entries(backend: Backend) -> list[tuple[str, int | None, str]]:
    return [(e.op, e.queue, e.detail) for e in backend.trace]


def test_queue_event_copy_and_sync_calls_are_traced_with_their_queue_and_detail_and_counted(backend: Backend) -> None:
    q = backend.default_queue()
    assert entries(backend) == [] and backend.stats.snapshot() == {"copies": 0, "allocs": 0, "launches": 0, "syncs": 0}
    side = backend.new_queue()
    dst = backend.alloc((2, 3))
    staging = backend.alloc_pinned(4, torch.int64)
    src = backend.to_device(torch.arange(6.0).reshape(2, 3))
    backend.copy(dst, src, side)
    event = backend.record_event(side)
    backend.wait_event(q, event)
    backend.event_synchronize(event)
    backend.synchronize()
    assert entries(backend) == [
        ("new_queue", side.id, ""),
        ("alloc", None, ""),
        ("alloc_pinned", None, ""),
        ("alloc", None, ""),
        ("copy", side.id, "bytes=24"),  # 6 float32 elements of 4 bytes
        ("record_event", side.id, f"event={event.id}"),
        ("wait_event", q.id, f"event={event.id} from={side.id}"),
        ("event_synchronize", side.id, f"event={event.id}"),
        ("synchronize", None, ""),
    ]
    assert backend.trace_ops() == [op for op, _, _ in entries(backend)]
    assert backend.stats.snapshot() == {"copies": 1, "allocs": 3, "launches": 0, "syncs": 1}
    assert dst.cpu().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert staging.shape == (4,) and staging.dtype == torch.int64


def test_every_call_adds_exactly_one_to_its_counter_each_time(backend: Backend) -> None:
    q = backend.default_queue()
    a, b = backend.alloc(3), backend.alloc(3)
    backend.alloc_pinned(3)
    for _ in range(3):
        backend.copy(a, b, q)
    backend.launch(lambda: None)
    backend.launch(lambda: None)
    backend.synchronize()
    backend.synchronize()
    assert backend.stats.snapshot() == {"copies": 3, "allocs": 3, "launches": 2, "syncs": 2}


def test_a_launch_passes_every_argument_returns_the_result_and_is_traced_on_the_current_queue(backend: Backend) -> None:
    side = backend.new_queue()
    backend.trace.clear()
    assert backend.launch(lambda a, b, *, scale: (a + b) * scale, 2, 3, scale=10) == 50
    with backend.use_queue(side):
        assert backend.launch(lambda *args, **kwargs: (args, kwargs), 1, k=2) == ((1,), {"k": 2})
    assert entries(backend) == [("launch", backend.default_queue().id, ""), ("launch", side.id, "")]
    assert backend.stats.launches == 2


def test_the_capture_pair_replay_and_destroy_are_traced_and_only_eager_work_and_replays_are_launches(backend: Backend) -> None:
    q = backend.default_queue()
    x = backend.to_device(torch.tensor([1.0, 2.0]))
    y = backend.alloc(2)
    backend.trace.clear()
    before = backend.stats.snapshot()
    backend.begin_capture(q)
    with backend.use_queue(q), torch.no_grad():
        backend.launch(lambda: y.copy_(x * 2))  # recorded into the graph: no launch of its own
    graph = backend.end_capture(q)
    backend.replay(graph, q)
    backend.replay(graph, q)
    backend.destroy(graph)
    assert entries(backend) == [
        ("begin_capture", q.id, ""),
        ("end_capture", q.id, ""),
        ("replay", q.id, f"graph={graph.id}"),
        ("replay", q.id, f"graph={graph.id}"),
        ("destroy", None, f"graph={graph.id}"),
    ]
    assert backend.stats.launches == before["launches"] + 2
    assert y.cpu().tolist() == [2.0, 4.0]


def test_an_aborted_capture_is_traced_once_and_an_abort_with_none_open_leaves_no_entry(backend: Backend) -> None:
    q = backend.default_queue()
    backend.abort_capture(q)
    backend.begin_capture(q)
    backend.abort_capture(q)
    backend.abort_capture(q)
    assert entries(backend) == [("begin_capture", q.id, ""), ("abort_capture", q.id, "")]
    assert not backend.capturing
