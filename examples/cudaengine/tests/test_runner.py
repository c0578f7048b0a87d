"""The runner captures its step once and every replay equals the eager forward, with and without a1_scale."""

from __future__ import annotations

import pytest
import torch

from cudaengine.runner import GraphRunner, QuantLinear

HIDDEN, BATCH = 16, 4


@pytest.mark.parametrize("with_scale", [True, False], ids=["a1_scale", "global_scale"])
def test_every_replay_equals_the_eager_forward(with_scale: bool) -> None:
    scale = torch.full((1,), 0.5, device="cuda") if with_scale else None
    model = QuantLinear(HIDDEN, scale, torch.full((1,), 2.0, device="cuda")).cuda()
    runner = GraphRunner(model, BATCH, HIDDEN)
    for step in range(3):
        x = torch.randn(BATCH, HIDDEN, device="cuda") + step
        with torch.no_grad():
            assert torch.allclose(runner.step(x), model(x), atol=1e-6)


def test_the_step_runs_on_the_device() -> None:
    model = QuantLinear(HIDDEN, None, torch.full((1,), 2.0, device="cuda")).cuda()
    runner = GraphRunner(model, BATCH, HIDDEN)
    assert runner.static_output.is_cuda and runner.step(torch.ones(BATCH, HIDDEN, device="cuda")).is_cuda
