"""An op that writes an argument AND returns new tensors replays both, and the capture runs neither.

A training batch norm writes its running statistics and returns new tensors (the normalised output,
the batch mean, the inverse deviation); ``rrelu`` in training writes its noise and returns its
output. Captured on CUDA, nothing of either runs until a replay: the written arguments keep their
contents, the new results are graph memory holding garbage; each replay writes the arguments again
and recomputes the results from what the inputs hold then. The emulator recorded such an op as in
place, so its new results kept their capture-time values at every replay (docs/seam.md, "Known
gaps", 3). ``F.batch_norm`` runs ``native_batch_norm`` on the CPU, whose schema does not say it
writes the running statistics: the capture advanced them, and again each time the replay plan was
timed; and its empty byte-typed reserve buffer could not be poisoned, so the capture failed to
close (gaps 6 and 7).
"""

from __future__ import annotations

import math

import pytest
import torch

from seam import EmulatedBackend

from .conftest import capture_full


def batch(emu: EmulatedBackend) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x [N=2, C=1], its running mean and running variance, on the device."""
    return emu.to_device(torch.tensor([[1.0], [3.0]])), emu.to_device(torch.zeros(1)), emu.to_device(torch.ones(1))


def refresh(emu: EmulatedBackend, x: torch.Tensor, rows: list[list[float]]) -> None:
    emu.copy(x, emu.to_device(torch.tensor(rows)), emu.default_queue())


def test_a_training_batch_norms_batch_statistics_are_garbage_until_a_replay_then_follow_its_input(emu: EmulatedBackend) -> None:
    x, mean, var = batch(emu)
    g, (y, batch_mean, batch_rstd) = capture_full(
        emu, lambda: torch.ops.aten._native_batch_norm_legit(x, None, None, mean, var, True, 0.5, 1e-5))
    assert torch.isnan(y).all() and torch.isnan(batch_mean).all() and torch.isnan(batch_rstd).all()
    assert (mean.tolist(), var.tolist()) == ([0.0], [1.0]), "the capture itself updates no running statistic"
    refresh(emu, x, [[5.0], [9.0]])  # batch mean 7, biased variance 4, unbiased 8
    g.replay()
    assert batch_mean.tolist() == [7.0] and batch_rstd.tolist() == pytest.approx([0.5], abs=1e-5)
    assert y.flatten().tolist() == pytest.approx([-1.0, 1.0], abs=1e-5)
    assert (mean.tolist(), var.tolist()) == ([3.5], [4.5])  # momentum 0.5, one update
    refresh(emu, x, [[0.0], [2.0]])
    g.replay()
    assert batch_mean.tolist() == [1.0] and mean.tolist() == [2.25]  # 0.5 * 3.5 + 0.5 * 1


def test_a_batch_norm_that_updates_its_statistics_returns_fresh_results_each_replay(emu: EmulatedBackend) -> None:
    x, mean, var = batch(emu)
    g, results = capture_full(emu, lambda: torch.ops.aten._batch_norm_with_update(x, None, None, mean, var, 0.5, 1e-5))
    y, batch_mean = results[0], results[1]
    assert torch.isnan(y).all() and torch.isnan(batch_mean).all()
    refresh(emu, x, [[5.0], [9.0]])
    g.replay()
    assert batch_mean.tolist() == [7.0] and mean.tolist() == [3.5]


def test_f_batch_norm_in_training_leaves_its_running_statistics_to_the_replays(emu: EmulatedBackend) -> None:
    x, mean, var = batch(emu)
    g, y = capture_full(emu, lambda: torch.nn.functional.batch_norm(x, mean, var, training=True, momentum=0.5))
    assert torch.isnan(y).all()
    assert (mean.tolist(), var.tolist()) == ([0.0], [1.0]), "neither the capture nor the timing of its replay plan runs"
    refresh(emu, x, [[5.0], [9.0]])
    g.replay()
    assert (mean.tolist(), var.tolist()) == ([3.5], [4.5])
    g.replay()
    assert (mean.tolist(), var.tolist()) == ([5.25], [6.25])  # exactly one update per replay


def test_a_training_rrelus_output_is_garbage_until_a_replay_then_follows_its_input(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.tensor([-2.0, 2.0]))
    g, y = capture_full(emu, lambda: torch.nn.functional.rrelu(x, 0.5, 0.5, training=True))  # slope 0.5 below zero
    assert all(math.isnan(v) for v in y.tolist())
    refresh(emu, x, [-4.0, 4.0])
    g.replay()
    assert y.tolist() == [-2.0, 4.0]
    refresh(emu, x, [6.0, -6.0])
    g.replay()
    assert y.tolist() == [6.0, -3.0]
