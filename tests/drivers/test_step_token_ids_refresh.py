"""``StepTokenIds``: each refresh copies this step's device ids into the one bound buffer, on the queue it is given.

The MoE driver's graph reads the bound address; the runner's device combine writes the ids
elsewhere. A refresh that lands in another buffer, on another queue, or not at all, hands the
replay yesterday's ids. These tests read the bound buffer, its address, the trace and the counters.
"""

from __future__ import annotations

import torch

from seam import EmulatedBackend, StepInputSource, get_step_input_stats, reset_step_input_stats

from drivers.step_token_ids import StepTokenIds


def test_each_refresh_puts_this_steps_device_ids_in_the_same_bound_buffer() -> None:
    backend = EmulatedBackend()
    ids = StepTokenIds(backend, slots=3)
    assert tuple(ids.ids.shape) == (3, 1) and ids.ids.dtype == torch.int64
    address = ids.ids.data_ptr()
    for row in ([4, 5, 6], [7, 8, 9]):
        ids.refresh(backend.default_queue(), backend.to_device(torch.tensor(row)))
        assert ids.ids.view(-1).tolist() == row
        assert ids.ids.data_ptr() == address, "the graph baked this address: a refresh never moves it"


def test_a_refresh_is_a_device_refresh_issued_on_the_queue_it_is_given() -> None:
    backend = EmulatedBackend()
    ids = StepTokenIds(backend, slots=2)
    side = backend.new_queue()
    source = backend.to_device(torch.tensor([11, 12]))
    reset_step_input_stats()
    backend.trace.clear()
    ids.refresh(side, source)
    assert [(e.op, e.queue) for e in backend.trace if e.op == "copy"] == [("copy", side.id)]
    assert get_step_input_stats().device_refreshes == 1 and get_step_input_stats().host_refreshes == 0
    assert ids.cell.last_source is StepInputSource.DEVICE


def test_ids_for_several_tokens_per_slot_fill_a_slots_by_steps_buffer_in_order() -> None:
    backend = EmulatedBackend()
    ids = StepTokenIds(backend, slots=2, steps=3)
    assert tuple(ids.ids.shape) == (2, 3)
    ids.refresh(backend.default_queue(), backend.to_device(torch.tensor([1, 2, 3, 4, 5, 6])))
    assert ids.ids.tolist() == [[1, 2, 3], [4, 5, 6]]
