"""What ``run_scenario`` feeds each driver at each step: the scenario's token row at the next position, on the default queue.

The exact suites, G1 and G4 all drive the drivers through ``run_scenario``; a scenario that feeds
the same position twice, starts one late or hands a slot another slot's row would be carried into
every one of them. These tests give ``run_scenario`` a recording stand-in for each driver class
(the ``module`` argument, as G4 gives it the unmigrated module) and read what it was called with.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from drivers.config import DriverConfig
from drivers.draft import ACCEPTED_PER_PROPOSE
from drivers.scenarios import DRIVERS, position_rows, run_scenario, token_rows
from seam import Backend, EmulatedBackend

CFG = DriverConfig(slots=3)
STEPS = 4


class Recorder:
    """Stands in for one driver class: records how it was built and every step it was asked for."""

    def __init__(self, backend: Backend, cfg: DriverConfig, *, graph: bool | None = None) -> None:
        self.backend, self.cfg, self.graph = backend, cfg, graph
        self.built_on = backend.current_queue().id
        self.calls: list[tuple[object, object, int]] = []
        Recorder.last = self

    def _record(self, tokens: object, position: object) -> None:
        tokens = tokens.tolist() if isinstance(tokens, torch.Tensor) else list(tokens)  # type: ignore[union-attr]
        self.calls.append((tokens, position if isinstance(position, int) else list(position), self.backend.current_queue().id))

    def step(self, tokens: object, position: object) -> torch.Tensor:
        self._record(tokens, position)
        return torch.full((self.cfg.slots, self.cfg.vocab), float(len(self.calls)))

    def propose(self, last: object, position: int) -> torch.Tensor:
        self._record(last, position)
        out = torch.zeros(self.cfg.slots, 1 + self.cfg.draft_k, self.cfg.vocab)
        out[:, ACCEPTED_PER_PROPOSE - 1, 10 + len(self.calls)] = 1.0  # accepts token 10+n in every slot
        return out


def recorded(name: str, graph: bool | None = None) -> tuple[Recorder, list[torch.Tensor], Backend]:
    backend = EmulatedBackend()
    module = SimpleNamespace(**{DRIVERS[name][1]: Recorder})
    driver, outputs = run_scenario(name, backend, steps=STEPS, cfg=CFG, module=module, graph=graph)
    assert driver is Recorder.last
    return driver, outputs, backend


@pytest.mark.parametrize("name", ["dense", "moe", "aux", "piecewise"])
def test_a_t1_driver_gets_the_scenarios_token_row_at_position_equal_to_the_step(name: str) -> None:
    driver, outputs, backend = recorded(name)
    default = backend.default_queue().id
    assert driver.calls == [(row, pos, default) for pos, row in enumerate(token_rows(CFG, STEPS))]
    assert [float(o[0, 0]) for o in outputs] == [1.0, 2.0, 3.0, 4.0] and all(o.device.type == "cpu" for o in outputs)


def test_the_resident_driver_gets_each_slots_own_position_advancing_one_per_step() -> None:
    driver, _, backend = recorded("resident")
    rows, positions = token_rows(CFG, STEPS), position_rows(CFG, STEPS)
    assert driver.calls == [(rows[s], positions[s], backend.default_queue().id) for s in range(STEPS)]
    assert [c[1] for c in driver.calls] == [[0, 2, 4], [1, 3, 5], [2, 4, 6], [3, 5, 7]]


def test_the_draft_driver_proposes_from_the_last_accepted_tokens_at_positions_advancing_by_the_accepted_count() -> None:
    driver, outputs, _ = recorded("draft")
    assert [c[1] for c in driver.calls] == [0, 2, 4, 6]
    assert [c[0] for c in driver.calls] == [[1, 2, 3], [11, 11, 11], [12, 12, 12], [13, 13, 13]]
    assert len(outputs) == STEPS


@pytest.mark.parametrize("graph", [None, False, True])
@pytest.mark.parametrize("name", list(DRIVERS))
def test_the_driver_is_built_on_the_default_queue_with_the_given_config_and_lane_choice(name: str, graph: bool | None) -> None:
    driver, _, backend = recorded(name, graph)
    assert driver.backend is backend and driver.cfg is CFG and driver.graph is graph
    assert driver.built_on == backend.default_queue().id


@pytest.mark.parametrize("name", list(DRIVERS))
def test_without_a_module_each_name_runs_its_own_driver_class(name: str) -> None:
    module, class_name = DRIVERS[name]
    driver, outputs = run_scenario(name, EmulatedBackend(), steps=1, cfg=CFG, graph=False)
    assert type(driver) is getattr(module, class_name) and driver.name == name and len(outputs) == 1
