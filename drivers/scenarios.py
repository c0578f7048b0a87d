"""One uniform way to drive each driver for N steps with CHANGING inputs, and its eager reference.

The exact suites, the G4 equivalence check, the switch probes run in child processes and the CUDA
G1 script all run a driver through ``run_scenario`` and compare with ``reference_scenario``, so a
driver's inputs are written once. ``module`` is the driver's module, or its unmigrated form loaded
from the mutation catalog: the scenario only needs the driver class and its ``step``/``propose``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable

import torch

from drivers import aux, dense, draft, moe, piecewise, resident
from drivers.config import DriverConfig
from seam import Backend

#: Driver name -> (module, class name).
DRIVERS: dict[str, tuple[ModuleType, str]] = {
    "dense": (dense, "DenseDriver"),
    "moe": (moe, "MoeDriver"),
    "draft": (draft, "DraftDriver"),
    "resident": (resident, "ResidentDriver"),
    "aux": (aux, "AuxDriver"),
    "piecewise": (piecewise, "PiecewiseDriver"),
}


def token_rows(cfg: DriverConfig, steps: int) -> list[list[int]]:
    """A different token per slot and step ([steps][B])."""
    return [[(7 * slot + 3 * step + 1) % cfg.vocab for slot in range(cfg.slots)] for step in range(steps)]


def position_rows(cfg: DriverConfig, steps: int) -> list[list[int]]:
    """Ragged per-slot positions for ``resident``: slot ``b`` starts at ``2b`` ([steps][B])."""
    return [[step + 2 * slot for slot in range(cfg.slots)] for step in range(steps)]


def device_of(backend: Backend) -> str:
    """The torch device a backend's buffers live on (the eager reference runs there too)."""
    return "cuda" if backend.name == "cuda" else "cpu"


def run_scenario(name: str, backend: Backend, *, steps: int, cfg: DriverConfig = DriverConfig(),
                 module: ModuleType | None = None, graph: bool | None = None) -> tuple[Any, list[torch.Tensor]]:
    """Build driver ``name`` on ``backend``, run ``steps`` steps; returns (driver, outputs on the host).

    Everything, the host read-back included, is issued on the backend's default queue: on CUDA a
    read issued on another stream would race the queue's work.
    """
    default_module, class_name = DRIVERS[name]
    with backend.use_queue(backend.default_queue()):
        driver = getattr(module or default_module, class_name)(backend, cfg, graph=graph)
        rows = token_rows(cfg, steps)
        run: dict[str, Callable[[], list[torch.Tensor]]] = {
            "dense": lambda: [driver.step(row, pos) for pos, row in enumerate(rows)],
            "moe": lambda: [driver.step(backend.to_device(torch.tensor(row)), pos) for pos, row in enumerate(rows)],
            "draft": lambda: draft.propose_schedule(cfg, driver.propose, steps),
            "resident": lambda: [driver.step(t, p) for t, p in zip(rows, position_rows(cfg, steps))],
            "aux": lambda: [driver.step(row, pos) for pos, row in enumerate(rows)],
            "piecewise": lambda: [driver.step(row, pos) for pos, row in enumerate(rows)],
        }
        return driver, [out.to("cpu") for out in run[name]()]


def reference_scenario(name: str, *, steps: int, cfg: DriverConfig = DriverConfig(), device: str = "cpu") -> list[torch.Tensor]:
    """The eager reference outputs of ``run_scenario(name, ...)``, computed on ``device``, returned on the host."""
    rows = token_rows(cfg, steps)
    if name == "draft":
        out = draft.reference_proposals(cfg, steps, device)
    elif name == "resident":
        out = resident.reference_logits(cfg, rows, position_rows(cfg, steps), device)
    else:
        out = DRIVERS[name][0].reference_logits(cfg, rows, device)
    return [t.to("cpu") for t in out]


def differing_values(outputs: list[torch.Tensor], expected: list[torch.Tensor]) -> tuple[int, int]:
    """(values compared, values that differ) between two output lists, bit for bit."""
    if len(outputs) != len(expected):
        raise ValueError(f"{len(outputs)} outputs against {len(expected)} expected")
    total = differ = 0
    for got, want in zip(outputs, expected):
        got, want = got.detach().to("cpu"), want.detach().to("cpu")
        if got.shape != want.shape:
            raise ValueError(f"output shape {tuple(got.shape)} differs from the reference's {tuple(want.shape)}")
        total += want.numel()
        differ += int((got != want).sum())  # a NaN differs from everything, itself included
    return total, differ
