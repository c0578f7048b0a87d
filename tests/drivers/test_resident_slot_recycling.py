"""Recycling a resident slot clears exactly that slot's keys and values, in place, and the graph keeps decoding it.

A recycled slot restarts at position 0 and rewrites each row before it reads it, so its values
cannot show a row that ``reset_slot`` forgot; only the cache itself can. These tests read the
resident cache: the recycled slot's rows are zero in every layer, for keys AND values, the other
slots' rows are byte for byte what they were, the buffer never moves, and the next steps on the
capture lane decode the recycled slot like a fresh one while the other slots carry on.
"""

from __future__ import annotations

import pytest
import torch

from drivers import resident
from drivers.config import DriverConfig
from seam import EagerBackend, EmulatedBackend, get_graph_break_stats, reset_graph_break_stats

from .queue_of_each_op import QueueOfEachOp

CFG = DriverConfig(slots=3)
TOKENS = [[5, 6, 7], [8, 9, 10], [11, 12, 13]]


def driver_after_three_steps(graph: bool | None, backend=None) -> resident.ResidentDriver:
    d = resident.ResidentDriver(backend or EmulatedBackend(), CFG, graph=graph)
    for step, row in enumerate(TOKENS):
        d.step(row, [step, step + 4, step + 8])
    return d


@pytest.mark.parametrize("slot", [0, 1, 2])
@pytest.mark.parametrize("graph", [False, True], ids=["eager-lane", "capture-lane"])
def test_reset_slot_zeroes_that_slots_keys_and_values_in_every_layer_and_nothing_else(graph: bool, slot: int) -> None:
    d = driver_after_three_steps(graph)
    k_before, v_before = d.resident.k.clone(), d.resident.v.clone()
    addresses = (d.resident.k.data_ptr(), d.resident.v.data_ptr())
    assert k_before[:, slot].abs().sum() > 0 and v_before[:, slot].abs().sum() > 0, "precondition: the slot was written"
    d.reset_slot(slot)
    assert (d.resident.k.data_ptr(), d.resident.v.data_ptr()) == addresses, "recycled in place"
    assert torch.count_nonzero(d.resident.k[:, slot]) == 0 and torch.count_nonzero(d.resident.v[:, slot]) == 0
    others = [b for b in range(CFG.slots) if b != slot]
    assert torch.equal(d.resident.k[:, others], k_before[:, others])
    assert torch.equal(d.resident.v[:, others], v_before[:, others])


def test_a_recycled_slot_decodes_like_a_fresh_slot_while_the_others_continue_on_the_same_graph() -> None:
    reset_graph_break_stats()
    kept = driver_after_three_steps(graph=True)
    recycled = driver_after_three_steps(graph=True)
    recycled.reset_slot(2)
    fresh = resident.ResidentDriver(EagerBackend(), CFG)
    for step, row in enumerate(([20, 21, 22], [23, 24, 25])):
        a = kept.step(row, [3 + step, 7 + step, 11 + step])
        b = recycled.step(row, [3 + step, 7 + step, 0 + step])  # slot 2 restarts at position 0
        f = fresh.step(row, [step, step, step])
        assert torch.equal(a[:2], b[:2]), f"step {step}: the slots that were not recycled carry on unchanged"
        assert torch.equal(b[2], f[2]), f"step {step}: the recycled slot decodes like a fresh one"
        assert not torch.equal(a[2], b[2]), f"step {step}: the recycled slot no longer sees its old history"
    assert get_graph_break_stats().segments_captured == 2, "one capture per driver: recycling never recaptures"


@pytest.mark.parametrize("graph", [False, True], ids=["eager-lane", "capture-lane"])
def test_each_resident_slot_reads_its_own_token_at_its_own_position(graph: bool) -> None:
    """Slot b's logits depend on tokens[b] and positions[b] only: change one slot's input, only its row changes."""
    base = driver_after_three_steps(graph).step([30, 31, 32], [3, 7, 11])
    token = driver_after_three_steps(graph).step([30, 40, 32], [3, 7, 11])
    position = driver_after_three_steps(graph).step([30, 31, 32], [3, 7, 10])  # slot 2 overwrites its own row 10
    assert base.shape == (CFG.slots, CFG.vocab)
    assert torch.equal(base[[0, 2]], token[[0, 2]]) and not torch.equal(base[1], token[1])
    assert torch.equal(base[:2], position[:2]) and not torch.equal(base[2], position[2])


def test_recycling_a_slot_is_issued_on_the_drivers_queue_whichever_queue_the_caller_is_on() -> None:
    backend = EmulatedBackend()
    d = driver_after_three_steps(graph=True, backend=backend)
    with backend.use_queue(backend.new_queue()), QueueOfEachOp(backend) as ops:
        d.reset_slot(1)
    assert ops.seen and {q for _, q in ops.seen} == {d.queue.id}, ops.seen
    assert [name for name, _ in ops.seen].count("zero_.default") == 2, "keys and values, one zeroing each"
