"""The collector guard (issue 8): no graph is released while a capture is open, on every arm.

Each case makes the collection happen at the critical moment itself (a graph in a reference cycle,
an explicit ``gc.collect()`` or a dropped last reference INSIDE the captured body), with the
automatic collector's thresholds raised for the test, so nothing depends on when the collector
happens to run. Without the guard (mutation ``seam-no-gc-guard``) these are exactly the cases that
turn red: on CUDA the release invalidates the open capture natively, and the CPU emulator, which
follows CUDA's global capture mode, invalidates it the same way.
"""

from __future__ import annotations

import gc
import weakref

import pytest
import torch

from seam import Backend, BreakableGraph, CaptureInvalidatedError, CaptureStateError, CaptureSyncError, GraphCaptureScope


pytestmark = pytest.mark.usefixtures("quiet_collector")


def captured_graph(b: Backend, x: torch.Tensor) -> tuple[BreakableGraph, torch.Tensor]:
    graph = BreakableGraph(b)
    with GraphCaptureScope(b, b.default_queue(), graph):
        y = x * 3
    return graph, y


def replay_values(b: Backend, graph: BreakableGraph, out: torch.Tensor) -> list[float]:
    graph.replay()
    b.synchronize()
    return out.cpu().tolist()


def test_a_graph_in_a_cycle_collected_inside_a_capture_does_not_invalidate_it(backend: Backend) -> None:
    x = backend.to_device(torch.tensor([1.0, 2.0]))
    with torch.no_grad():
        old, _ = captured_graph(backend, x)
        cycle: list[object] = [old]
        cycle.append(cycle)
        del old, cycle
        graph = BreakableGraph(backend)
        with GraphCaptureScope(backend, backend.default_queue(), graph):
            y = x + 1
            gc.collect()  # finalizes the old graph now, while this capture is open
        assert replay_values(backend, graph, y) == [2.0, 3.0]


def test_a_graph_whose_last_reference_drops_inside_a_capture_is_released_after_it(backend: Backend) -> None:
    x = backend.to_device(torch.tensor([1.0, 2.0]))
    with torch.no_grad():
        holder = [captured_graph(backend, x)[0]]
        graph = BreakableGraph(backend)
        with GraphCaptureScope(backend, backend.default_queue(), graph):
            y = x + 1
            holder.clear()  # the old graph's last reference: its segments are finalized here
        assert replay_values(backend, graph, y) == [2.0, 3.0]


def test_destroy_called_inside_another_capture_is_deferred_and_the_graph_cannot_replay(backend: Backend) -> None:
    x = backend.to_device(torch.tensor([1.0, 2.0]))
    with torch.no_grad():
        old, _ = captured_graph(backend, x)
        graph = BreakableGraph(backend)
        with GraphCaptureScope(backend, backend.default_queue(), graph):
            y = x + 1
            old.destroy()
        assert replay_values(backend, graph, y) == [2.0, 3.0]
    with pytest.raises(CaptureStateError, match="destroyed"):
        old.replay()


def test_the_collector_runs_before_the_capture_begins(backend: Backend) -> None:
    class Garbage:
        pass

    junk = Garbage()
    junk.self = junk  # type: ignore[attr-defined]
    ref = weakref.ref(junk)
    del junk
    seen_in_body: list[bool] = []
    graph = BreakableGraph(backend)
    with torch.no_grad(), GraphCaptureScope(backend, backend.default_queue(), graph):
        seen_in_body.append(ref() is None)
    assert seen_in_body == [True], "garbage from before the capture must be collected before it begins"


def test_the_automatic_collector_is_off_during_capture_and_restored_after(backend: Backend) -> None:
    gc.enable()
    seen: list[bool] = []
    with torch.no_grad(), GraphCaptureScope(backend, backend.default_queue(), BreakableGraph(backend)):
        seen.append(gc.isenabled())
    assert (seen, gc.isenabled()) == ([False], True)


def test_a_disabled_collector_stays_disabled_and_a_raising_body_restores_it(backend: Backend) -> None:
    gc.disable()
    with pytest.raises(ValueError, match="body"), torch.no_grad():
        with GraphCaptureScope(backend, backend.default_queue(), BreakableGraph(backend)):
            raise ValueError("the body's own error")
    assert not gc.isenabled()
    gc.enable()
    with pytest.raises(ValueError, match="body"), torch.no_grad():
        with GraphCaptureScope(backend, backend.default_queue(), BreakableGraph(backend)):
            raise ValueError("the body's own error")
    assert gc.isenabled()


# -- CUDA's global capture mode: refused from ANY queue or backend while a capture is open --------
def test_synchronize_of_another_backend_during_a_capture_is_refused(backend: Backend) -> None:
    other = type(backend)()
    with pytest.raises(CaptureSyncError, match="synchronize"), torch.no_grad():
        with GraphCaptureScope(backend, backend.default_queue(), BreakableGraph(backend)):
            other.synchronize()
    assert not backend.capturing


def test_event_synchronize_during_a_capture_is_refused_even_for_an_event_of_another_queue(backend: Backend) -> None:
    side = backend.new_queue()
    event = backend.record_event(side)
    with pytest.raises(CaptureSyncError, match="event_synchronize"), torch.no_grad():
        with GraphCaptureScope(backend, backend.default_queue(), BreakableGraph(backend)):
            backend.event_synchronize(event)


def test_a_host_read_on_a_queue_outside_the_capture_is_refused(backend: Backend) -> None:
    side = backend.new_queue()
    total = backend.alloc(1)  # device memory made before: only the READ happens in the capture
    torch.sum(backend.to_device(torch.ones(4)), 0, keepdim=True, out=total)
    with pytest.raises(CaptureSyncError), torch.no_grad():
        with GraphCaptureScope(backend, backend.default_queue(), BreakableGraph(backend)):
            with backend.use_queue(side):
                total.item()


def test_work_that_allocates_on_a_queue_outside_the_capture_is_refused(backend: Backend) -> None:
    side = backend.new_queue()
    w = backend.to_device(torch.ones(4))
    with pytest.raises(CaptureStateError, match="allocates device memory"), torch.no_grad():
        with GraphCaptureScope(backend, backend.default_queue(), BreakableGraph(backend)):
            with backend.use_queue(side):
                w * 2


def test_an_unsafe_call_caught_by_the_body_still_invalidates_the_capture(backend: Backend) -> None:
    with pytest.raises(CaptureInvalidatedError, match="synchronize"), torch.no_grad():
        with GraphCaptureScope(backend, backend.default_queue(), BreakableGraph(backend)):
            try:
                backend.synchronize()
            except CaptureSyncError:
                pass


def test_a_copy_from_the_device_into_pageable_host_memory_on_a_queue_outside_the_capture_is_refused(backend: Backend) -> None:
    # The copy waits for its queue on the host, as item() does there (global capture mode). The emulator
    # used to let it through and then took the host tensor for device memory, so a later
    # pageable-to-device copy inside the capture passed where CUDA refuses it.
    side = backend.new_queue()
    d = backend.to_device(torch.tensor([1.0, 2.0]))
    host = torch.zeros(2)
    with pytest.raises(CaptureSyncError), torch.no_grad():
        with GraphCaptureScope(backend, backend.default_queue(), BreakableGraph(backend)):
            with backend.use_queue(side):
                host.copy_(d)
