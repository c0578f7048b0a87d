"""``seam.testing.TinyModel``, the seeded model the seam's tests and benchmarks share: its head is a softmax per row.

Kept beside the plugin's tests (``seam/testing.py`` is test support, like ``seam/pytest_plugin.py``);
the seam's replay tests compare a graph with an eager forward of the same model, which a wrong head
passes as long as both sides share it.
"""

from __future__ import annotations

import torch

from seam import EagerBackend
from seam.testing import TinyModel


def test_each_row_of_the_tiny_models_output_is_a_probability_distribution_over_the_hidden_units() -> None:
    model = TinyModel(EagerBackend())
    x = torch.randn(4, 16, generator=torch.Generator().manual_seed(7))  # [B, H]
    with torch.no_grad():
        out = model.forward(x)  # [B, H]
    assert out.shape == (4, 16)
    assert torch.allclose(out.sum(dim=-1), torch.ones(4), atol=1e-6), out.sum(dim=-1)
    assert bool((out > 0).all())
