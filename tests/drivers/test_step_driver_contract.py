"""The shared driver start's contract: a driver must define its forward, names its lane, and compares values on the host.

``StepDriver`` refuses a subclass that never defined ``_forward`` by name at its first step; a
driver's ``lane`` is its step runner's; ``differing_values`` reads outputs held in accelerator
memory back to the host before comparing them (a stand-in plays the accelerator here).
"""

from __future__ import annotations

import pytest
import torch

from drivers.config import DriverConfig
from drivers.scenarios import differing_values
from drivers.step_driver import StepDriver
from seam import CaptureMode, EagerBackend, EmulatedBackend


class NoForward(StepDriver):
    name = "noforward"

    def __init__(self, backend, cfg: DriverConfig = DriverConfig()) -> None:  # type: ignore[no-untyped-def]
        super().__init__(backend, cfg, graph=False)
        self.tokens = self.new_input((cfg.slots, 1))
        self.positions = self.new_input((cfg.slots, 1))
        self.start_step(CaptureMode.FULL, self.tokens, self.positions)


def test_a_driver_that_never_defined_its_forward_is_refused_by_name_at_its_first_step() -> None:
    driver = NoForward(EagerBackend())
    with pytest.raises(NotImplementedError, match=r"^NoForward must define _forward$"):
        driver.run_step([1, 2], [0, 0])


@pytest.mark.parametrize("graph", [False, True])
def test_a_drivers_lane_is_its_step_runners(graph: bool) -> None:
    driver = NoForward(EmulatedBackend())
    driver.step_fn.lane = "capture" if graph else "eager"
    assert driver.lane == driver.step_fn.lane


class AcceleratorOutput:
    """Values in accelerator memory: only ``.to("cpu")`` hands them over; anything else is refused."""

    def __init__(self, values: torch.Tensor) -> None:
        self.values = values

    def detach(self) -> "AcceleratorOutput":
        return self

    def to(self, device: object) -> object:
        return self.values.clone() if device is not None and torch.device(device).type == "cpu" else self

    def __getattr__(self, name: str) -> object:
        raise TypeError(f"accelerator memory: read it back to the host first ({name})")


def test_differing_values_reads_accelerator_outputs_back_to_the_host() -> None:
    a, b = torch.tensor([[1.0, 2.0]]), torch.tensor([[1.0, 3.0]])
    assert differing_values([AcceleratorOutput(a)], [AcceleratorOutput(b)]) == (2, 1)  # type: ignore[list-item]
    assert differing_values([AcceleratorOutput(a)], [a]) == (2, 0)  # type: ignore[list-item]
