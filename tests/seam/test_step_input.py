"""``PersistentStepInput``: address-stable per-step inputs, with the source as an observable."""

from __future__ import annotations

import pytest
import torch

from seam import (
    Backend,
    BreakableGraph,
    GraphCaptureScope,
    PersistentStepInput,
    StepInputError,
    StepInputSource,
    get_step_input_stats,
)


def test_a_refresh_over_the_capacity_is_refused_and_counts_nothing(backend: Backend) -> None:
    cell = PersistentStepInput().bind(backend, backend.alloc((4,), torch.int64))
    with pytest.raises(StepInputError, match="REFUSED"):
        cell.refresh_from_host(backend.default_queue(), torch.arange(5))
    with pytest.raises(StepInputError, match="REFUSED"):
        cell.refresh_from_device(backend.default_queue(), backend.alloc((5,), torch.int64))
    assert (cell.host_refreshes, cell.device_refreshes, cell.last_source) == (0, 0, StepInputSource.UNSET)


def test_a_zero_element_refresh_still_counts_and_sets_last_source(backend: Backend) -> None:
    buf = backend.to_device(torch.tensor([7, 7], dtype=torch.int64))
    cell = PersistentStepInput().bind(backend, buf)
    copies = backend.stats.copies
    cell.refresh_from_host(backend.default_queue(), torch.empty(0, dtype=torch.int64))
    assert (cell.host_refreshes, cell.last_source) == (1, StepInputSource.HOST)
    cell.refresh_from_device(backend.default_queue(), backend.alloc((0,), torch.int64))
    assert (cell.device_refreshes, cell.last_source) == (1, StepInputSource.DEVICE)
    assert backend.stats.copies == copies, "a zero-element refresh skips only the copy"
    assert buf.cpu().tolist() == [7, 7]
    stats = get_step_input_stats()
    assert (stats.binds, stats.host_refreshes, stats.device_refreshes) == (1, 1, 1)


def test_re_binding_resets_the_cells_counters_but_not_the_process_counters(backend: Backend) -> None:
    cell = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64))
    cell.refresh_from_host(backend.default_queue(), torch.tensor([1, 2]))
    cell.refresh_from_device(backend.default_queue(), backend.alloc((2,), torch.int64))
    cell.bind(backend, backend.alloc((3,), torch.int64))
    assert (cell.host_refreshes, cell.device_refreshes, cell.last_source, cell.capacity) == (0, 0, StepInputSource.UNSET, 3)
    assert get_step_input_stats().binds == 2 and get_step_input_stats().host_refreshes == 1


def test_a_short_refresh_writes_only_the_prefix(backend: Backend) -> None:
    buf = backend.to_device(torch.tensor([9, 9, 9], dtype=torch.int64))
    cell = PersistentStepInput().bind(backend, buf)
    cell.refresh_from_host(backend.default_queue(), torch.tensor([1, 2]))
    backend.synchronize()
    assert buf.cpu().tolist() == [1, 2, 9]


def test_a_refresh_of_the_wrong_dtype_or_an_unbound_cell_is_refused(backend: Backend) -> None:
    cell = PersistentStepInput()
    with pytest.raises(StepInputError, match="not bound"):
        cell.refresh_from_host(backend.default_queue(), torch.tensor([1]))
    cell.bind(backend, backend.alloc((2,), torch.int64))
    with pytest.raises(StepInputError, match="dtype"):
        cell.refresh_from_host(backend.default_queue(), torch.tensor([1.0]))


@pytest.mark.parametrize("arm", ["host", "device"])
def test_a_replay_sees_values_refreshed_in_place_before_it(backend: Backend, arm: str) -> None:
    q = backend.default_queue()
    ids = PersistentStepInput().bind(backend, backend.alloc((3,), torch.int64))
    table = backend.to_device(torch.arange(100, 110))
    graph = BreakableGraph(backend)
    with GraphCaptureScope(backend, q, graph):
        out = table[ids.device] * 2
    graph.register_input(ids)
    source = backend.alloc((3,), torch.int64)
    for step in ([1, 2, 3], [7, 0, 9], [4, 4, 4], [0, 1, 0]):
        if arm == "host":
            ids.refresh_from_host(q, torch.tensor(step))
        else:
            backend.copy(source, torch.tensor(step), q)
            ids.refresh_from_device(q, source)
        graph.replay(q)
        backend.synchronize()
        assert out.cpu().tolist() == [2 * (100 + s) for s in step]


def test_a_refresh_from_device_inside_capture_is_re_read_at_every_replay(backend: Backend) -> None:
    q = backend.default_queue()
    mirror = backend.alloc((2,), torch.int64)  # the runner writes sampled tokens here
    ids = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64))
    graph = BreakableGraph(backend)
    with GraphCaptureScope(backend, q, graph):
        ids.refresh_from_device(q, mirror)
        out = ids.device + 1000
    assert ids.device_refreshes == 1, "captured once; replays re-read the mirror without host code"
    for step in ([3, 4], [5, 6], [8, 1], [2, 2]):
        backend.copy(mirror, torch.tensor(step), q)
        graph.replay(q)
        backend.synchronize()
        assert out.cpu().tolist() == [s + 1000 for s in step]


def test_a_staged_refresh_waits_for_the_previous_upload_before_the_host_rewrites_the_staging_block(backend: Backend) -> None:
    q = backend.default_queue()
    cell = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64))
    backend.trace.clear()
    cell.refresh_from_host(q, torch.tensor([1, 2]))
    cell.refresh_from_host(q, torch.tensor([3, 4]))
    ops = [op for op in backend.trace_ops() if op in ("copy", "record_event", "event_synchronize")]
    # The second host write may only start once the first asynchronous upload has read the block.
    assert ops == ["copy", "record_event", "event_synchronize", "copy", "record_event"]
    backend.synchronize()
    assert cell.device.cpu().tolist() == [3, 4]
