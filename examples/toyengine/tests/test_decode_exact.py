"""Values only: every step equals the eager reference (blind, by design, to which machinery ran)."""

import torch

from toyengine.decode import DecodeStep, reference_logits

STEPS = [[1, 2], [3, 4], [5, 6], [7, 0]]


def test_every_step_equals_the_eager_reference(backend):
    step = DecodeStep(backend)
    got = [step.step(tokens).cpu() for tokens in STEPS]
    for n, (logits, want) in enumerate(zip(got, reference_logits(STEPS))):
        assert torch.equal(logits, want), f"step {n} differs from the eager reference"
