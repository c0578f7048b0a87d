"""``seam.testing.TinyModel``, the seeded model the seam's tests and benchmarks share: one function per seed.

Kept beside the plugin's tests (``seam/testing.py`` is test support, like ``seam/pytest_plugin.py``).
The seam's replay tests compare a graph with an eager forward of the SAME model, which any change of
the model passes; the benchmarks (``bench/bench_emulator.py``, ``bench/bench_cuda.py``) name it by
``hidden`` and ``layers`` only, so a seed must keep meaning the same function: the values below were
recorded from this model at the commit that added them.
"""

from __future__ import annotations

import pytest
import torch

from seam import EagerBackend
from seam.testing import TinyModel


def _input(hidden: int) -> torch.Tensor:
    return torch.randn(2, hidden, generator=torch.Generator().manual_seed(7))  # [B, H]


def _forward(model: TinyModel, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model.forward(x)  # [B, H]


def test_each_row_of_the_tiny_models_output_is_a_probability_distribution_over_the_hidden_units() -> None:
    x = torch.randn(4, 16, generator=torch.Generator().manual_seed(7))  # [B, H]
    out = _forward(TinyModel(EagerBackend()), x)
    assert out.shape == (4, 16)
    assert torch.allclose(out.sum(dim=-1), torch.ones(4), atol=1e-6), out.sum(dim=-1)
    assert bool((out > 0).all())


def test_one_seed_is_one_function_and_another_seed_another() -> None:
    x = _input(16)
    first, again = _forward(TinyModel(EagerBackend(), seed=3), x), _forward(TinyModel(EagerBackend(), seed=3), x)
    assert torch.equal(first, again)
    assert not torch.equal(first, _forward(TinyModel(EagerBackend(), seed=4), x))


def test_the_default_model_is_sixteen_wide_one_block_deep_and_seed_zero() -> None:
    x = _input(16)
    assert torch.equal(_forward(TinyModel(EagerBackend()), x),
                       _forward(TinyModel(EagerBackend(), hidden=16, layers=1, seed=0), x))


@pytest.mark.parametrize(("hidden", "layers", "seed", "recorded"), [
    (16, 1, 0, [[0.014657, 0.014580, 0.007229, 0.032028], [0.010359, 0.067350, 0.024840, 0.188545]]),
    (8, 3, 5, [[0.032074, 0.101263, 0.319885, 0.068910], [0.024377, 0.071092, 0.511588, 0.131849]]),
])
def test_a_seeded_tiny_model_gives_the_outputs_recorded_for_it(hidden: int, layers: int, seed: int,
                                                               recorded: list[list[float]]) -> None:
    out = _forward(TinyModel(EagerBackend(), hidden=hidden, layers=layers, seed=seed), _input(hidden))
    assert torch.allclose(out[:, :4], torch.tensor(recorded), atol=1e-5), out[:, :4].tolist()


def test_the_tiny_model_maps_each_hidden_vector_alone_whatever_the_leading_dimensions() -> None:
    # norm and head act on the last dimension only: a [B, S, H] input is B * S rows of [H]
    x = torch.randn(2, 3, 16, generator=torch.Generator().manual_seed(11))  # [B, S, H]
    model = TinyModel(EagerBackend())
    by_rows = _forward(model, x.reshape(6, 16)).reshape(2, 3, 16)  # [B, S, H]
    assert torch.allclose(_forward(model, x), by_rows, atol=1e-6)
