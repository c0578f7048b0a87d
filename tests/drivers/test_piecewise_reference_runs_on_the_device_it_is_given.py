"""The piecewise driver's eager reference runs on the device it is given: weights, cache, ids and rare path alike.

``meta`` stands in for an accelerator (shapes only, no values). The rare path's ``torch.nonzero`` has
no data-independent meta form, so torch's switch ``meta_nonzero_assume_all_nonzero`` is set for the
test: every row counts as routed, which is enough to see where each tensor lives.
"""

from __future__ import annotations

import torch
import torch.fx.experimental._config as fx_config

from drivers import piecewise
from drivers.config import DriverConfig

CFG = DriverConfig()
ROWS = [[1, 8], [4, 11]]


def test_the_piecewise_reference_runs_on_the_device_it_is_given() -> None:
    with fx_config.patch(meta_nonzero_assume_all_nonzero=True):
        out = piecewise.reference_logits(CFG, ROWS, "meta")
    assert [(t.device.type, tuple(t.shape)) for t in out] == [("meta", (CFG.slots, CFG.vocab))] * len(ROWS)
