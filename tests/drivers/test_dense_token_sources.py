"""Where a dense step's tokens come from: the host vector without a mirror, the mirror's live row with one.

With no mirror a step needs host tokens (refused by name without them). With the mirror live the
host vector is stale by design and ignored (not even uploaded): a step given wrong host tokens decodes exactly what a
step given none decodes, namely the mirror's live row, on both lanes.
"""

from __future__ import annotations

import pytest
import torch

from drivers.config import DriverConfig
from drivers.dense import DenseDriver, reference_logits
from drivers.token_mirror import TokenMirror
from seam import EagerBackend, EmulatedBackend

CFG = DriverConfig(slots=3)


def test_a_step_without_a_mirror_needs_host_tokens() -> None:
    driver = DenseDriver(EagerBackend(), CFG)
    with pytest.raises(ValueError, match=r"^dense step without a token mirror needs host tokens$"):
        driver.step(None, 0)


@pytest.mark.parametrize("graph", [False, True], ids=["eager-lane", "capture-lane"])
def test_with_the_mirror_live_the_host_tokens_are_ignored_and_the_live_row_is_decoded(graph: bool) -> None:
    outputs = {}
    for label, host in (("none", None), ("stale", [40, 41, 42])):
        backend = EmulatedBackend()
        with backend.use_queue(backend.default_queue()):
            mirror = TokenMirror(backend, CFG.slots, depth=2)
            mirror.seed([5, 6, 7])
            driver = DenseDriver(backend, CFG, mirror=mirror, graph=graph)
            first = driver.step(host, 0)
            mirror.publish(first)
            outputs[label] = (first, driver.step(host, 1), mirror.current().tolist(), backend.stats.copies)
    assert torch.equal(outputs["none"][0], outputs["stale"][0]) and torch.equal(outputs["none"][1], outputs["stale"][1])
    assert outputs["none"][3] == outputs["stale"][3], "the stale host vector is not even uploaded"
    expected = reference_logits(CFG, [[5, 6, 7], outputs["none"][2]])
    assert torch.equal(outputs["none"][0], expected[0]) and torch.equal(outputs["none"][1], expected[1])


@pytest.mark.parametrize("graph", [False, True], ids=["eager-lane", "capture-lane"])
def test_without_a_mirror_each_step_decodes_the_host_tokens_it_is_given(graph: bool) -> None:
    driver = DenseDriver(EmulatedBackend(), CFG, graph=graph)
    rows = [[1, 2, 3], [9, 8, 7], [4, 4, 4]]
    got = [driver.step(row, pos) for pos, row in enumerate(rows)]
    want = reference_logits(CFG, rows)
    assert all(g.shape == (CFG.slots, CFG.vocab) and torch.equal(g, w) for g, w in zip(got, want))
