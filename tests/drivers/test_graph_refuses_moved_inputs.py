"""Every buffer a driver's captured graph reads is registered with it, so moving one is refused at the next replay.

A captured graph bakes addresses. Each driver registers its step inputs (and the buffers it keeps
resident across replays) with its graph in a fixed order; a buffer moved under the graph must make
the next step raise ``AddressChangedError`` naming that input, never replay over the old buffer.
"""

from __future__ import annotations

from typing import Callable

import pytest
import torch

from drivers.scenarios import DRIVERS, run_scenario
from seam import AddressChangedError, EmulatedBackend

#: name -> the registered buffers, in registration order, as a way to reach each from the driver.
REGISTERED: dict[str, list[tuple[str, Callable[[object], torch.Tensor]]]] = {
    "dense": [("tokens", lambda d: d.tokens.device), ("positions", lambda d: d.positions.device),
              ("cache.k", lambda d: d.cache.k), ("cache.v", lambda d: d.cache.v)],
    "moe": [("token ids", lambda d: d.token_ids.ids), ("positions", lambda d: d.positions.device)],
    "draft": [("tokens", lambda d: d.tokens.device), ("positions", lambda d: d.positions.device)],
    "resident": [("tokens", lambda d: d.tokens.device), ("positions", lambda d: d.positions.device),
                 ("resident.k", lambda d: d.resident.k), ("resident.v", lambda d: d.resident.v)],
    "aux": [("tokens", lambda d: d.tokens.device), ("positions", lambda d: d.positions.device)],
    "piecewise": [("tokens", lambda d: d.tokens.device), ("positions", lambda d: d.positions.device),
                  ("bridge", lambda d: d.bridge)],
}
CASES = [(name, index) for name in DRIVERS for index in range(len(REGISTERED[name]))]


def next_step(name: str, driver: object, backend: EmulatedBackend) -> None:
    with backend.use_queue(backend.default_queue()):
        if name == "draft":
            driver.propose([1, 2], 2)  # type: ignore[attr-defined]
        elif name == "moe":
            driver.step(backend.to_device(torch.tensor([3, 4])), 1)  # type: ignore[attr-defined]
        elif name == "resident":
            driver.step([3, 4], [1, 3])  # type: ignore[attr-defined]
        else:
            driver.step([3, 4], 1)  # type: ignore[attr-defined]


def test_each_driver_registers_exactly_its_listed_buffers() -> None:
    assert set(REGISTERED) == set(DRIVERS)
    for name in DRIVERS:
        driver, _ = run_scenario(name, EmulatedBackend(), steps=1, graph=True)
        registered = [value for _, value, _ in driver.step_fn.graph._inputs]
        assert len(registered) == len(REGISTERED[name]), name


@pytest.mark.parametrize("name,index", CASES, ids=[f"{n}-{REGISTERED[n][i][0]}" for n, i in CASES])
def test_a_buffer_moved_under_the_graph_is_refused_at_the_next_step_naming_it(name: str, index: int) -> None:
    backend = EmulatedBackend()
    driver, _ = run_scenario(name, backend, steps=1, graph=True)
    buffer = REGISTERED[name][index][1](driver)
    buffer.data = buffer.data.clone()  # same values, a new address
    with pytest.raises(AddressChangedError, match=rf"^input\[{index}\] moved from "):
        next_step(name, driver, backend)


@pytest.mark.parametrize("name", list(DRIVERS))
def test_with_nothing_moved_the_next_step_replays(name: str) -> None:
    backend = EmulatedBackend()
    driver, _ = run_scenario(name, backend, steps=1, graph=True)
    next_step(name, driver, backend)
    assert driver.lane == "capture"
