"""``capture_one``'s barrier given as a ``torch.distributed`` process group: met on THAT group, in its place.

A sub-group barrier met on the whole world (``group=None``) hangs the ranks outside the group, or
lets the group's ranks pass unaligned; the two-rank gloo test (``test_capture_one.py``) cannot tell,
its group IS the world. ``torch.distributed.barrier`` is replaced by a recorder here, so the group it
receives, and when, are what the test reads.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.distributed as dist

from seam import Backend, BreakableGraph, CaptureMode, capture_one


class SubGroup:
    """Stands for a ``ProcessGroup`` of some ranks: not callable, as a real one is not."""


def test_a_process_group_barrier_is_met_once_on_that_group_after_synchronize_and_before_the_graph(
        backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[Any] = []
    group = SubGroup()

    def barrier(group: Any = None, **kwargs: Any) -> None:
        events.append(("barrier", group))

    monkeypatch.setattr(dist, "barrier", barrier)
    real_sync = backend.synchronize
    monkeypatch.setattr(backend, "synchronize", lambda: (events.append("synchronize"), real_sync())[1])
    x = backend.to_device(torch.tensor([1.0]))

    def factory() -> BreakableGraph:
        events.append("graph")
        return BreakableGraph(backend, CaptureMode.FULL)

    done = capture_one(lambda: x + 1, backend=backend, graph=factory, warmups=1, barrier=group)
    assert events == ["synchronize", ("barrier", group), "graph"]
    assert events[1][1] is group
    done.graph.replay()
    assert done.output.cpu().tolist() == [2.0]


def test_no_barrier_calls_no_distributed_barrier(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(dist, "barrier", lambda *a, **k: calls.append((a, k)))
    capture_one(lambda: None, backend=backend, graph=CaptureMode.FULL, warmups=1)
    assert calls == []
