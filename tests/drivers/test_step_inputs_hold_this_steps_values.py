"""After each step, a driver's bound step inputs hold THIS step's tokens and positions, laid out one row per slot.

The captured graph reads the bound buffers, so what they hold after a step is what the replay
decoded. A position that did not advance, a slot given another slot's position, or a draft row
whose positions are not consecutive shows here directly, on both lanes.
"""

from __future__ import annotations

import pytest
import torch

from drivers import aux, dense, draft, moe, piecewise, resident
from drivers.config import DriverConfig
from seam import EmulatedBackend

CFG = DriverConfig(slots=3)
LANES = pytest.mark.parametrize("graph", [False, True], ids=["eager-lane", "capture-lane"])


@LANES
@pytest.mark.parametrize("make", [dense.DenseDriver, aux.AuxDriver, piecewise.PiecewiseDriver],
                         ids=["dense", "aux", "piecewise"])
def test_a_t1_step_holds_its_tokens_and_every_slot_at_the_steps_position(make, graph: bool) -> None:
    driver = make(EmulatedBackend(), CFG, graph=graph)
    for position, row in enumerate(([1, 2, 3], [4, 5, 6], [7, 8, 9])):
        driver.step(row, position)
        assert driver.tokens.device.tolist() == [[t] for t in row]
        assert driver.positions.device.tolist() == [[position]] * CFG.slots


@LANES
def test_a_moe_step_holds_the_device_ids_and_every_slot_at_the_steps_position(graph: bool) -> None:
    backend = EmulatedBackend()
    driver = moe.MoeDriver(backend, CFG, graph=graph)
    for position, row in enumerate(([1, 2, 3], [4, 5, 6])):
        driver.step(backend.to_device(torch.tensor(row)), position)
        assert driver.token_ids.ids.tolist() == [[t] for t in row]
        assert driver.positions.device.tolist() == [[position]] * CFG.slots


@LANES
def test_a_resident_step_holds_each_slots_own_token_and_position(graph: bool) -> None:
    driver = resident.ResidentDriver(EmulatedBackend(), CFG, graph=graph)
    for tokens, positions in (([1, 2, 3], [0, 5, 9]), ([4, 5, 6], [1, 6, 10])):
        driver.step(tokens, positions)
        assert driver.tokens.device.tolist() == [[t] for t in tokens]
        assert driver.positions.device.tolist() == [[p] for p in positions]


@LANES
def test_a_draft_propose_holds_the_accepted_token_then_k_masks_at_consecutive_positions(graph: bool) -> None:
    driver = draft.DraftDriver(EmulatedBackend(), CFG, graph=graph)
    mask = CFG.vocab - 1
    for last, position in (([5, 6, 7], 0), ([8, 9, 10], 2)):
        out = driver.propose(last, position)
        assert out.shape == (CFG.slots, 1 + CFG.draft_k, CFG.vocab)
        assert driver.tokens.device.tolist() == [[t] + [mask] * CFG.draft_k for t in last]
        assert driver.positions.device.tolist() == [list(range(position, position + 1 + CFG.draft_k))] * CFG.slots
