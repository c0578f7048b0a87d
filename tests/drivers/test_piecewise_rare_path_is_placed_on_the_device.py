"""The piecewise driver places its rare path (route and transform) on the device through ``backend.to_device``.

The routing runs on the driver's queue between the two segments, reading the route and transform
as device tensors; left on the host (no placement), a CUDA run would mix devices in the break.
"""

from __future__ import annotations

import torch

from drivers.config import DriverConfig
from drivers.piecewise import PiecewiseDriver, RarePath
from seam import EmulatedBackend


def test_the_rare_paths_route_and_transform_are_device_copies_made_by_the_backend() -> None:
    backend = EmulatedBackend()
    placed: list[torch.Tensor] = []
    to_device = backend.to_device

    def recording_to_device(tensor: torch.Tensor) -> torch.Tensor:
        placed.append(to_device(tensor))
        return placed[-1]

    backend.to_device = recording_to_device  # type: ignore[method-assign]
    driver = PiecewiseDriver(backend, DriverConfig(), graph=True)
    assert any(t is driver.rare.route for t in placed), "the route is a device copy"
    assert any(t is driver.rare.transform for t in placed), "the transform is a device copy"
    host = RarePath.seeded(DriverConfig())
    assert torch.equal(driver.rare.route, host.route) and torch.equal(driver.rare.transform, host.transform)
