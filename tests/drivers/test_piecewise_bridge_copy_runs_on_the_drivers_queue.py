"""The piecewise driver's bridge copy (the eager routing between its two segments) is issued on the driver's queue.

At the warm pass, at capture and at every replay the break writes the routed stream into the bridge
buffer with ``backend.copy(..., self.queue)``. On CUDA a copy issued on another stream would race
the segment that reads the bridge; here every ``copy`` entry of the backend trace must name the
driver's queue, on either lane.
"""

from __future__ import annotations

import pytest

from drivers.piecewise import PiecewiseDriver
from seam import EmulatedBackend

STEPS = 3


@pytest.mark.parametrize("graph", [True, False], ids=["capture-lane", "eager-lane"])
def test_every_bridge_copy_is_issued_on_the_drivers_queue(graph: bool) -> None:
    backend = EmulatedBackend()
    driver = PiecewiseDriver(backend, graph=graph)
    bridge_bytes = f"bytes={driver.bridge.numel() * driver.bridge.element_size()}"
    with backend.use_queue(driver.queue):
        for pos in range(STEPS):
            driver.step([3, 5], pos)
    bridge_copies = [e for e in backend.trace if e.op == "copy" and e.detail == bridge_bytes]
    expected = 2 + STEPS if graph else STEPS  # capture lane: warm pass, capture, then once per replay
    assert driver.lane == ("capture" if graph else "eager")
    assert len(bridge_copies) == expected
    assert {e.queue for e in bridge_copies} == {driver.queue.id}
