"""A scenario and its reference hand back HOST tensors, and the reference is computed on the device it is named.

``run_scenario`` reads every step output back with ``.to("cpu")`` and ``reference_scenario`` passes
its ``device`` to the driver's reference, then reads the outputs back the same way. A stand-in for
accelerator memory (only ``.to("cpu")`` hands values over) tells a read-back from a no-op ``.to``,
which a CPU run cannot; a recording reference tells which device each reference was asked for.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from drivers import dense, draft, resident
from drivers.config import DriverConfig
from drivers.scenarios import reference_scenario, run_scenario, token_rows
from seam import EmulatedBackend

CFG = DriverConfig()
STEPS = 2


class AcceleratorOutput:
    """Values in accelerator memory: only ``.to("cpu")`` hands them over; anything else is refused."""

    def __init__(self, values: torch.Tensor) -> None:
        self.values = values

    def to(self, device: object) -> object:
        return self.values.clone() if device is not None and torch.device(device).type == "cpu" else self

    def __getattr__(self, name: str) -> object:
        raise TypeError(f"accelerator memory: read it back to the host first ({name})")


def test_run_scenario_reads_every_step_output_back_to_the_host() -> None:
    class AcceleratorDense:
        def __init__(self, backend: Any, cfg: DriverConfig, *, graph: bool | None) -> None:
            self.cfg = cfg

        def step(self, row: list[int], pos: int) -> AcceleratorOutput:
            return AcceleratorOutput(torch.tensor([float(pos), *map(float, row)]))

    module = type("m", (), {"DenseDriver": AcceleratorDense})
    _, outputs = run_scenario("dense", EmulatedBackend(), steps=STEPS, module=module)  # type: ignore[arg-type]
    rows = token_rows(CFG, STEPS)
    assert all(type(out) is torch.Tensor for out in outputs), "host tensors, not accelerator memory"
    assert [out.tolist() for out in outputs] == [[float(pos), *map(float, row)] for pos, row in enumerate(rows)]


@pytest.mark.parametrize("name", ["dense", "draft", "resident"])
def test_reference_scenario_computes_on_the_device_it_is_named_and_reads_back_to_the_host(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[object] = []

    def recording(*args: Any) -> list[AcceleratorOutput]:
        asked.append(args[-1])
        return [AcceleratorOutput(torch.tensor([float(i)])) for i in range(STEPS)]

    module, attribute = {"dense": (dense, "reference_logits"), "draft": (draft, "reference_proposals"),
                         "resident": (resident, "reference_logits")}[name]
    monkeypatch.setattr(module, attribute, recording)
    out = reference_scenario(name, steps=STEPS, device="cuda:3")
    assert asked == ["cuda:3"], "the reference is asked for the named device"
    assert all(type(t) is torch.Tensor for t in out) and [t.tolist() for t in out] == [[0.0], [1.0]]

