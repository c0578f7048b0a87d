"""Each decode step writes each slot's KV-cache row at that slot's own position, and positions advance per step.

The exact suites compare a driver with an eager reference that shares its model code, so a
position that never advances, advances by two, or a slot written at another slot's row can be
carried by both sides. These tests read the driver's OWN cache after a run: which (layer, slot,
row) entries are written must be exactly the positions the scenario fed, on every lane (the eager
backend, the emulator's eager lane, and its capture lane, where the positions reach the graph only
through the step inputs refreshed before each replay).
"""

from __future__ import annotations

import pytest
import torch

from drivers import dense, resident
from drivers.config import DriverConfig
from drivers.draft import ACCEPTED_PER_PROPOSE
from drivers.scenarios import DRIVERS, position_rows, run_scenario
from drivers.tiny_model import KVCache
from seam import Backend, EagerBackend, EmulatedBackend

CFG = DriverConfig(slots=3)
STEPS = 4
LANES = {"eager-backend": (EagerBackend, None), "eager-lane": (EmulatedBackend, False),
         "capture-lane": (EmulatedBackend, True)}


def cache_of(driver: object) -> KVCache:
    return driver.resident if isinstance(driver, resident.ResidentDriver) else driver.cache  # type: ignore[attr-defined]


def written_rows(cache: KVCache) -> list[list[list[int]]]:
    """[layer][slot] -> the sorted cache rows holding a key (a written row is never all zeros here)."""
    written = cache.k.detach().to("cpu").abs().sum(-1) != 0  # [L, B, S]
    return [[torch.nonzero(written[layer, slot]).view(-1).tolist() for slot in range(written.shape[1])]
            for layer in range(written.shape[0])]


def expected_rows(name: str) -> list[list[int]]:
    """[slot] -> the rows the scenario's positions name, over ``STEPS`` steps (or proposes)."""
    if name == "resident":
        return [sorted({row[slot] for row in position_rows(CFG, STEPS)}) for slot in range(CFG.slots)]
    if name == "draft":
        last = ACCEPTED_PER_PROPOSE * (STEPS - 1) + CFG.draft_k  # the last propose's last position
        return [list(range(last + 1))] * CFG.slots
    return [list(range(STEPS))] * CFG.slots


@pytest.mark.parametrize("lane", list(LANES))
@pytest.mark.parametrize("name", list(DRIVERS))
def test_every_layer_writes_each_slot_exactly_at_the_positions_it_was_fed(name: str, lane: str) -> None:
    make, graph = LANES[lane]
    backend: Backend = make()
    driver, _ = run_scenario(name, backend, steps=STEPS, cfg=CFG, graph=graph)
    if lane == "capture-lane" and driver.lane != "capture":
        raise AssertionError(f"{name} must take the capture lane when graph=True: {driver.lane}")
    want = expected_rows(name)
    got = written_rows(cache_of(driver))
    for layer in range(CFG.layers):
        assert got[layer] == want, f"{name} on the {lane}, layer {layer}: slots wrote rows {got[layer]}, fed {want}"


@pytest.mark.parametrize("graph", [False, True], ids=["eager-lane", "capture-lane"])
def test_a_dense_step_writes_only_the_row_of_its_position_and_leaves_earlier_rows_as_they_were(graph: bool) -> None:
    driver = dense.DenseDriver(EmulatedBackend(), CFG, graph=graph)
    driver.step([1, 2, 3], 0)
    after_first = driver.cache.k.clone()
    driver.step([4, 5, 6], 5)  # a jump: only row 5 may change
    changed = (driver.cache.k != after_first).any(-1)  # [L, B, S]
    assert torch.nonzero(changed)[:, 2].unique().tolist() == [5]
    assert changed[:, :, 5].all(), "every layer and slot writes its row at the step's position"


@pytest.mark.parametrize("graph", [False, True], ids=["eager-lane", "capture-lane"])
def test_a_resident_slot_writes_at_its_own_position_and_not_at_another_slots(graph: bool) -> None:
    driver = resident.ResidentDriver(EmulatedBackend(), CFG, graph=graph)
    for positions in ([0, 7, 3], [1, 8, 4], [2, 9, 5]):
        driver.step([11, 12, 13], positions)
    got = written_rows(driver.resident)
    assert got == [[[0, 1, 2], [7, 8, 9], [3, 4, 5]]] * CFG.layers
    assert (driver.resident.v.abs().sum(-1) != 0).sum().item() == CFG.layers * 9, "values written at the same rows as keys"
