"""A captured ``_foreach`` op replays into every tensor of the list it returned.

The multi-tensor ops of the fused optimizers (``torch._foreach_sqrt``, ``_foreach_add``, ...) return a
LIST of fresh tensors. Captured on CUDA, each of them is an output of the graph: poisoned (never
written) until the first replay, then recomputed at every replay from what the inputs hold NOW. The
emulator replays such an op either as is, copying each fresh tensor into its captured output, or
through its ``out=`` overload, which takes the whole list as ONE ``out`` argument; a list of several
tensors must come back whole either way.
"""

from __future__ import annotations

import torch

from seam import EmulatedBackend

from .conftest import capture_full


def test_a_foreach_sqrt_of_two_tensors_is_poisoned_until_a_replay_then_follows_its_inputs(emu: EmulatedBackend) -> None:
    xs = [emu.to_device(torch.tensor([1.0, 4.0])), emu.to_device(torch.tensor([9.0]))]
    g, roots = capture_full(emu, lambda: torch._foreach_sqrt(xs))
    assert len(roots) == 2 and all(torch.isnan(r).all() for r in roots)  # nothing ran in the capture
    g.replay()
    assert [r.tolist() for r in roots] == [[1.0, 2.0], [3.0]]
    xs[0].copy_(emu.to_device(torch.tensor([16.0, 25.0])))
    xs[1].copy_(emu.to_device(torch.tensor([36.0])))
    g.replay()
    assert [r.tolist() for r in roots] == [[4.0, 5.0], [6.0]]


def test_a_foreach_add_of_three_pairs_replays_every_sum_with_its_alpha(emu: EmulatedBackend) -> None:
    xs = [emu.to_device(torch.tensor([float(i)])) for i in range(3)]
    ys = [emu.to_device(torch.tensor([10.0 * (i + 1)])) for i in range(3)]
    g, sums = capture_full(emu, lambda: torch._foreach_add(xs, ys, alpha=2))
    for y in ys:
        y.add_(1.0)
    g.replay()
    assert [s.item() for s in sums] == [22.0, 43.0, 64.0]
