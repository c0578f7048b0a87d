"""``capture_one``'s ordering contract for any number of warmups, as one event list per row.

Seeds 002/003: each warmup forward then its hook; after the LAST hook ``synchronize()``, then the
barrier, then graph construction, then exactly one captured forward. Rows vary the warmups (0 to
3), the hook and the barrier (present or not), the queue, and a backend that cannot capture.
"""

from __future__ import annotations

import pytest
import torch

from seam import Backend, BreakableGraph, CaptureMode, EagerBackend, capture_one, get_graph_break_stats, is_capturing


def recorded(backend: Backend, *, warmups: int, hook: bool = True, barrier: bool = True, queue=None):
    events: list[str] = []
    x = backend.to_device(torch.tensor([1.0, 2.0]))

    def forward() -> torch.Tensor:
        where = "captured" if backend.capturing else "warmup"
        events.append(f"forward-{where}" + ("" if is_capturing() else "-NOT-PREPARING"))
        return x * 2

    real_sync = backend.synchronize

    def sync() -> None:
        events.append("synchronize")
        real_sync()

    backend.synchronize = sync  # type: ignore[method-assign]

    def factory() -> BreakableGraph:
        events.append("graph")
        return BreakableGraph(backend, CaptureMode.FULL)

    done = capture_one(forward, backend=backend, graph=factory, warmups=warmups,
                       post_warmup_hook=(lambda: events.append("hook")) if hook else None,
                       barrier=(lambda: events.append("barrier")) if barrier else None, queue=queue)
    backend.synchronize = real_sync  # type: ignore[method-assign]
    return events, done, x


TAIL = ["synchronize", "barrier", "graph", "forward-captured"]


@pytest.mark.parametrize("warmups", [0, 1, 2, 3])
def test_each_warmup_then_its_hook_then_sync_barrier_graph_and_one_captured_forward(backend: Backend, warmups: int) -> None:
    events, done, _ = recorded(backend, warmups=warmups)
    assert events == ["forward-warmup", "hook"] * warmups + TAIL
    assert not done.inert and done.graph.captured and len(done.graph.segments) == 1
    assert get_graph_break_stats().segments_captured == 1


def test_without_a_hook_or_a_barrier_the_order_is_the_same_less_them(backend: Backend) -> None:
    events, _, _ = recorded(backend, warmups=2, hook=False, barrier=False)
    assert events == ["forward-warmup", "forward-warmup", "synchronize", "graph", "forward-captured"]


def test_the_captured_output_is_the_forwards_static_buffer_and_replays_track_the_input(backend: Backend) -> None:
    _, done, x = recorded(backend, warmups=1)
    x.copy_(backend.to_device(torch.tensor([5.0, 7.0])))
    done.graph.replay()
    backend.synchronize()
    assert done.output.cpu().tolist() == [10.0, 14.0]
    assert get_graph_break_stats().replays == 1


def test_a_mode_builds_the_graph_in_that_mode(backend: Backend) -> None:
    x = backend.to_device(torch.tensor([1.0]))
    done = capture_one(lambda: x + 1, backend=backend, graph=CaptureMode.PIECEWISE, warmups=1)
    assert done.graph.mode is CaptureMode.PIECEWISE and done.graph.captured


def test_the_warmups_and_the_capture_run_on_the_queue_it_is_given(backend: Backend) -> None:
    side = backend.new_queue()
    queues = []
    x = backend.alloc((1,))
    capture_one(lambda: (queues.append(backend.current_queue().id), x + 1)[1], backend=backend,
                graph=CaptureMode.FULL, warmups=2, queue=side)
    assert queues == [side.id] * 3
    backend.trace.clear()
    recorded(backend, warmups=1, queue=side)
    begins = [e for e in backend.trace if e.op == "begin_capture"]
    assert [e.queue for e in begins] == [side.id]
    assert backend.current_queue() == backend.default_queue()  # and the caller's queue is back


def test_a_backend_that_cannot_capture_runs_the_forward_eagerly_once_more_and_says_inert() -> None:
    backend = EagerBackend()
    events, done, _ = recorded(backend, warmups=2)
    assert events == ["forward-warmup", "hook", "forward-warmup", "hook", "synchronize", "barrier", "graph",
                      "forward-warmup"]
    assert done.inert and not done.graph.captured
    assert done.output.tolist() == [2.0, 4.0]  # inert: the eager forward's real values
    assert get_graph_break_stats().inert_scopes == 1


def test_preparation_ends_when_capture_one_returns_even_when_the_forward_raises(backend: Backend) -> None:
    def forward() -> None:
        if backend.capturing:
            raise ValueError("captured forward failed")

    with pytest.raises(ValueError, match="captured forward failed"):
        capture_one(forward, backend=backend, graph=CaptureMode.FULL, warmups=1)
    assert not is_capturing() and not backend.capturing
