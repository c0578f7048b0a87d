"""A backend author implements the native hooks; the base hands each one the caller's own arguments, in call order.

``Backend`` is the protocol base class: a subclass provides ``_native_*`` (and ``_handoff``, the
ordering of a queue's work with the caller's own stream) and the base does the bookkeeping. So what a
backend author relies on is what each public call hands its hooks: the queue it was issued on (work
is handed off to THAT queue and issued with it current: a copy, a replay, an upload on the default
queue), the event, the graph, the capture pool, the shape as a tuple and the dtype asked for. The CPU
backends ignore most of these (one host, logical queues), ``CudaBackend`` needs every one of them
(``queue.native`` is its stream), so the order and arguments of the hook calls are shown here through
a minimal backend written the way a new platform's would be.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import torch

from seam import Backend, Event, Queue, RawGraph


class RecordingBackend(Backend):
    """A CPU backend that records every native hook call: what a new platform's backend would receive."""

    name = "recording"
    can_capture = True

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        super().__init__()

    @contextlib.contextmanager
    def _handoff(self, queue: Queue) -> Iterator[None]:
        self.calls.append(("handoff", queue.id))
        yield

    def _native_use_queue(self, queue: Queue) -> contextlib.AbstractContextManager[Any]:
        self.calls.append(("use_queue", queue.id))
        return contextlib.nullcontext()

    def _native_record_event(self, queue: Queue) -> Event:
        self.calls.append(("record_event", queue.id))
        return super()._native_record_event(queue)

    def _native_wait_event(self, queue: Queue, event: Event) -> None:
        self.calls.append(("wait_event", queue.id, event.id))

    def _native_event_synchronize(self, event: Event) -> None:
        self.calls.append(("event_synchronize", event.id))

    def _native_synchronize(self) -> None:
        self.calls.append(("synchronize",))

    def _check_copy_in_capture(self, dst: torch.Tensor, src: torch.Tensor) -> None:
        self.calls.append(("check_copy", dst.shape, src.dtype, self.current_queue().id))

    def _native_alloc(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        self.calls.append(("alloc", shape, dtype, self.current_queue().id))
        return torch.zeros(shape, dtype=dtype)

    def _native_alloc_pinned(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        self.calls.append(("alloc_pinned", shape, dtype))
        return torch.zeros(shape, dtype=dtype)

    def _native_begin_capture(self, queue: Queue, pool: Any) -> None:
        self.calls.append(("begin_capture", queue.id, pool))

    def _native_end_capture(self, queue: Queue) -> RawGraph:
        self.calls.append(("end_capture", queue.id))
        return RawGraph()

    def _native_abort_capture(self, queue: Queue) -> None:
        self.calls.append(("abort_capture", queue.id))

    def _native_replay(self, graph: RawGraph, queue: Queue) -> None:
        self.calls.append(("replay", graph.id, queue.id, self.current_queue().id))


def test_queue_event_and_memory_calls_reach_the_hooks_with_the_callers_queue_event_shape_and_dtype() -> None:
    b = RecordingBackend()
    q, side = b.default_queue(), b.new_queue()
    dst = b.alloc(3, torch.int64)
    pinned = b.alloc_pinned((2, 2), torch.bfloat16)
    src = b.to_device(torch.tensor([1, 2, 3]))
    b.copy(dst, src, side)
    event = b.record_event(side)
    b.wait_event(q, event)
    b.event_synchronize(event)
    b.synchronize()
    assert b.calls == [
        ("handoff", q.id), ("alloc", (3,), torch.int64, q.id),
        ("alloc_pinned", (2, 2), torch.bfloat16),
        ("handoff", q.id), ("alloc", (3,), torch.int64, q.id), ("handoff", q.id), ("use_queue", q.id),
        ("handoff", side.id), ("use_queue", side.id), ("check_copy", (3,), torch.int64, side.id),
        ("record_event", side.id),
        ("wait_event", q.id, event.id),
        ("event_synchronize", event.id),
        ("synchronize",),
    ]
    assert dst.tolist() == [1, 2, 3] and pinned.dtype == torch.bfloat16 and b.current_queue() == q


def test_the_capture_pair_and_replay_reach_the_hooks_with_the_callers_queue_graph_and_pool() -> None:
    b = RecordingBackend()
    q, side = b.default_queue(), b.new_queue()
    pool = object()
    b.begin_capture(side, pool)
    b.abort_capture(side)
    b.begin_capture(q, pool)
    inside = b.alloc((2,), torch.float16)  # on the capturing default queue: issued with it current
    graph = b.end_capture(q)
    b.replay(graph, side)
    assert b.calls == [
        ("begin_capture", side.id, pool), ("abort_capture", side.id),
        ("begin_capture", q.id, pool),
        ("use_queue", q.id), ("alloc", (2,), torch.float16, q.id),
        ("end_capture", q.id),
        ("handoff", side.id), ("use_queue", side.id), ("replay", graph.id, side.id, side.id),
    ]
    assert inside.dtype == torch.float16 and b.current_queue() == q
