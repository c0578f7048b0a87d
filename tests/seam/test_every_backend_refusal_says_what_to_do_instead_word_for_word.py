"""Every refusal the backend base class makes, word for word, and what a refused call leaves behind.

A caller who misuses the raw capture pair, replays a destroyed graph, synchronizes or allocates
where CUDA's global capture mode refuses it, or makes a capturing queue wait on uncaptured work
reads the message: it names the call and says what to do instead. A refused call does nothing else:
it is neither counted nor traced, the capture that was open stays open (or, for a host sync, is
invalidated and ends in ``CaptureInvalidatedError`` naming the sync), and a mismatched
``end_capture`` leaves the right one still to come.
"""

from __future__ import annotations

import re

import pytest
import torch

from seam import (
    Backend,
    CaptureDependencyError,
    CaptureInvalidatedError,
    CaptureStateError,
    CaptureSyncError,
    EmulatedBackend,
)


def test_a_second_begin_capture_is_refused_and_the_first_capture_stays_open(backend: Backend) -> None:
    q = backend.default_queue()
    backend.begin_capture(q)
    try:
        with pytest.raises(CaptureStateError) as refused:
            backend.begin_capture(backend.new_queue())
        assert str(refused.value) == "begin_capture while a capture is already open on this backend"
        assert backend.capturing and backend.trace_ops().count("begin_capture") == 1
        backend.end_capture(q)
    finally:
        backend.abort_capture(q)
    assert not backend.capturing


def test_end_capture_without_a_begin_is_refused_naming_the_queue(backend: Backend) -> None:
    q = backend.default_queue()
    with pytest.raises(CaptureStateError) as refused:
        backend.end_capture(q)
    assert str(refused.value) == f"end_capture on queue {q.id} without a matching begin_capture"
    assert "end_capture" not in backend.trace_ops()


def test_end_capture_on_another_queue_is_refused_and_the_capture_can_still_end_where_it_began(backend: Backend) -> None:
    q, side = backend.default_queue(), backend.new_queue()
    x = backend.to_device(torch.tensor([1.0, 2.0]))
    backend.begin_capture(q)
    try:
        with backend.use_queue(q), torch.no_grad():
            x.mul_(3)
        with pytest.raises(CaptureStateError) as refused:
            backend.end_capture(side)
        assert str(refused.value) == f"end_capture on queue {side.id} without a matching begin_capture"
        assert backend.capturing
        graph = backend.end_capture(q)
    finally:
        backend.abort_capture(q)
    assert [(e.op, e.queue) for e in backend.trace if e.op.endswith("_capture")] == [
        ("begin_capture", q.id), ("end_capture", q.id)]
    backend.replay(graph, q)
    backend.synchronize()
    assert x.cpu().tolist() == [3.0, 6.0]


def test_a_destroyed_graph_refuses_to_replay_and_the_refused_replay_is_neither_counted_nor_traced(backend: Backend) -> None:
    q = backend.default_queue()
    x = backend.to_device(torch.tensor([1.0]))
    backend.begin_capture(q)
    with backend.use_queue(q), torch.no_grad():
        x.add_(1)
    graph = backend.end_capture(q)
    backend.destroy(graph)
    backend.destroy(graph)  # a second destroy has nothing left to do
    launches, ops = backend.stats.launches, backend.trace_ops()
    assert ops.count("destroy") == 1
    with pytest.raises(CaptureStateError) as refused:
        backend.replay(graph, q)
    assert str(refused.value) == f"replay of destroyed graph {graph.id}"
    assert backend.stats.launches == launches and backend.trace_ops() == ops
    assert x.cpu().tolist() == [1.0]


INVALIDATED = ("the {name} capture on queue {queue} was invalidated by {call} while it was open: CUDA's global "
               "capture mode refuses it from anywhere in the process; release graphs, synchronize and read device "
               "values before the capture begins or after it ends")


@pytest.mark.parametrize("call", ["synchronize()", "event_synchronize()"])
def test_a_host_sync_in_capture_is_refused_uncounted_and_the_capture_ends_invalidated_naming_it(backend: Backend,
                                                                                            call: str) -> None:
    q = backend.default_queue()
    event = backend.record_event(backend.new_queue())
    syncs = backend.stats.syncs
    backend.begin_capture(q)
    try:
        with pytest.raises(CaptureSyncError) as refused:
            backend.synchronize() if call == "synchronize()" else backend.event_synchronize(event)
        assert str(refused.value) == (
            f"{call} while a graph capture is open: a host sync invalidates the capture (CUDA's global capture "
            "mode refuses it from any queue); synchronize before the capture begins")
        assert backend.stats.syncs == syncs and call[:-2] not in backend.trace_ops()
        with pytest.raises(CaptureInvalidatedError) as invalidated:
            backend.end_capture(q)
    finally:
        backend.abort_capture(q)
    assert str(invalidated.value) == INVALIDATED.format(name=backend.name, queue=q.id, call=call)
    assert not backend.capturing
    backend.synchronize()  # allowed again once the capture is closed
    assert backend.stats.syncs == syncs + 1


def test_alloc_while_the_capture_is_on_another_queue_is_refused_and_counted_before_the_refusal(backend: Backend) -> None:
    side = backend.new_queue()
    backend.begin_capture(side)
    try:
        allocs = backend.stats.allocs
        with pytest.raises(CaptureStateError) as refused:
            backend.alloc((2,))
        assert str(refused.value) == (
            "alloc() while a capture is open on another queue: CUDA would allocate on a queue outside the capture, "
            "which its global capture mode refuses (H200: zeros_on_other_stream_in_capture); allocate the buffer "
            "before the capture begins")
        assert backend.capturing and backend.stats.allocs == allocs + 1
    finally:
        backend.abort_capture(side)
    assert not backend.capturing


def test_alloc_while_another_backend_captures_is_refused(backend: Backend) -> None:
    other = EmulatedBackend()
    other.begin_capture(other.default_queue())
    try:
        with pytest.raises(CaptureStateError, match=re.escape("alloc() while a capture is open on another queue")):
            backend.alloc((2,))
    finally:
        other.abort_capture(other.default_queue())
    assert backend.alloc((2,)).cpu().tolist() == [0.0, 0.0]


def test_a_capturing_queue_made_to_wait_on_uncaptured_work_is_refused_with_the_way_out(backend: Backend) -> None:
    q, side = backend.default_queue(), backend.new_queue()
    x = backend.alloc((4,))
    with backend.use_queue(side), torch.no_grad():
        x.add_(1)
    before = backend.record_event(side)
    backend.begin_capture(q)
    try:
        with pytest.raises(CaptureDependencyError) as refused:
            backend.wait_event(q, before)
    finally:
        backend.abort_capture(q)
    assert str(refused.value) == (
        f"queue {q.id} is capturing and was made to wait on event {before.id}, recorded on queue {side.id} outside "
        "the capture (CUDA: dependency created on uncaptured work); synchronize that work before the capture "
        "begins, or record the event inside the capture")
    assert not backend.capturing
