"""The piecewise driver's rare path and its two-segment forward, held to what their docstrings say.

``RarePath.apply`` transforms exactly the rows whose route score is positive (``tanh`` of the row
through ``transform``) and leaves every other row as it was; its weights come from the seed after
the model's; with an identity bridge the two-segment forward IS the plain decoder's last column;
the driver needs a layer on each side of the break.
"""

from __future__ import annotations

import math

import pytest
import torch

from drivers.config import DriverConfig
from drivers.piecewise import PiecewiseDriver, RarePath, two_segment_forward
from drivers.tiny_model import KVCache, TinyWeights, decode_forward
from seam import EagerBackend

CFG = DriverConfig()


def test_the_rare_path_transforms_exactly_the_rows_whose_route_score_is_positive() -> None:
    route = torch.tensor([1.0, -1.0, 0.0, 0.0])
    transform = torch.arange(16, dtype=torch.float32).reshape(4, 4) / 20
    rare = RarePath(route=route, transform=transform)
    x = torch.tensor([[[2.0, 1.0, 0.5, 0.0]], [[1.0, 3.0, 0.0, 1.0]], [[1.0, 1.0, 2.0, 2.0]]])  # scores 1, -2, 0
    got = rare.apply(x)
    assert got.shape == x.shape
    assert torch.allclose(got[0, 0], torch.tanh(x[0, 0] @ transform)), "a positive score: transformed"
    assert torch.equal(got[1], x[1]), "a negative score: untouched"
    assert torch.equal(got[2], x[2]), "a score of exactly zero is not positive: untouched"
    assert torch.equal(x[0, 0], torch.tensor([2.0, 1.0, 0.5, 0.0])), "the input itself is not written"


def test_the_rare_path_handles_several_tokens_per_slot_row_by_row() -> None:
    rare = RarePath(route=torch.tensor([1.0, 0.0]), transform=torch.eye(2) * 2)
    x = torch.tensor([[[1.0, 1.0], [-1.0, 0.0]], [[-3.0, 1.0], [0.5, -0.5]]])  # [B=2, T=2, H=2]
    want = x.clone()
    for b, t in ((0, 0), (1, 1)):
        want[b, t] = torch.tanh(x[b, t] * 2)
    assert torch.equal(rare.apply(x), want)


def test_the_rare_paths_weights_come_from_the_seed_after_the_models_scaled_by_sqrt_hidden() -> None:
    rare = RarePath.seeded(CFG)
    g = torch.Generator().manual_seed(CFG.seed + 1)
    assert torch.equal(rare.route, torch.randn(CFG.hidden, generator=g))
    assert torch.equal(rare.transform, torch.randn(CFG.hidden, CFG.hidden, generator=g) / math.sqrt(CFG.hidden))
    placed = RarePath.seeded(CFG, lambda t: t + 1)
    assert torch.equal(placed.route, rare.route + 1) and torch.equal(placed.transform, rare.transform + 1)
    assert not torch.equal(RarePath.seeded(DriverConfig(seed=5)).route, rare.route)


def test_with_an_identity_bridge_the_two_segment_forward_is_the_plain_decoders_last_column() -> None:
    cfg = DriverConfig(layers=3)
    weights = TinyWeights.seeded(cfg)
    tokens, positions = torch.tensor([[4], [9]]), torch.tensor([[0], [0]])
    seen = []

    def bridge(x: torch.Tensor) -> torch.Tensor:
        seen.append(x.clone())
        return x

    got = two_segment_forward(weights, KVCache.allocate(cfg), tokens, positions, bridge)
    plain = decode_forward(weights, KVCache.allocate(cfg), tokens, positions)
    assert got.shape == (2, cfg.vocab) and torch.equal(got, plain[:, -1])
    assert len(seen) == 1, "the bridge runs once, after layer 0"


def test_the_bridges_result_is_what_the_second_segment_reads() -> None:
    cfg = DriverConfig()
    weights = TinyWeights.seeded(cfg)
    tokens, positions = torch.tensor([[4], [9]]), torch.tensor([[0], [0]])
    kept = two_segment_forward(weights, KVCache.allocate(cfg), tokens, positions, lambda x: x)
    zeroed = two_segment_forward(weights, KVCache.allocate(cfg), tokens, positions, lambda x: x * 0)
    assert not torch.equal(kept, zeroed)


@pytest.mark.parametrize("layers", [1])
def test_the_piecewise_driver_needs_a_layer_on_each_side_of_the_break(layers: int) -> None:
    with pytest.raises(ValueError, match=r"^the piecewise driver needs >= 2 layers: one segment on each side of the break$"):
        PiecewiseDriver(EagerBackend(), DriverConfig(layers=layers))
    assert PiecewiseDriver(EagerBackend(), DriverConfig(layers=2)).lane == "eager"
