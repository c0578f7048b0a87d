"""The dense battery under the asynchronous device-token mirror: depth 1 and 2, graph on and off.

Seed 004's measurement, inverted: the unmigrated driver declined its graph under a live mirror
because a replay read the stale host vector (depth-2 graph ON: slots 1-3 degenerate). Here every
slot's token stream, over every step, must equal a greedy eager reference: none degenerate. The
battery reads values only; whether the graph really ran under the mirror is a seam-test question
(``test_dense_seam.py``), so the unmigrated driver, which declines, passes here too.
"""

from __future__ import annotations

import pytest

from drivers.config import DriverConfig
from drivers.dense import DenseDriver, reference_greedy
from drivers.scenarios import device_of
from drivers.token_mirror import TokenMirror
from seam import Backend

SLOTS, STEPS = 4, 8
FIRST = [3, 11, 19, 27]


@pytest.mark.parametrize("graph", [True, False], ids=["graph-on", "graph-off"])
@pytest.mark.parametrize("depth", [1, 2], ids=["depth-1", "depth-2"])
def test_every_slot_decodes_the_reference_tokens_under_the_async_mirror(backend: Backend, depth: int, graph: bool) -> None:
    cfg = DriverConfig(slots=SLOTS)
    with backend.use_queue(backend.default_queue()):  # the runner reads back on the queue it works on
        mirror = TokenMirror(backend, SLOTS, depth)
        mirror.seed(FIRST)
        driver = DenseDriver(backend, cfg, mirror=mirror, graph=graph)
        fed = []
        for position in range(STEPS):
            fed.append(mirror.current().tolist())
            mirror.publish(driver.step(None, position))
    expected = reference_greedy(cfg, FIRST, STEPS, device_of(backend))
    bad = [slot for slot in range(SLOTS) if [row[slot] for row in fed] != [row[slot] for row in expected]]
    assert bad == [], f"degenerate slots {bad} at depth {depth}, graph {'on' if graph else 'off'}"
