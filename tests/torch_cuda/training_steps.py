"""Training steps over a device tensor, for the tests of compiled training (helpers, not tests)."""

from __future__ import annotations

from typing import Callable

import torch

STEPS = 4


def train(step: Callable[..., torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> list[list[float]]:
    """The gradient of ``x`` after each of ``STEPS`` backwards, ``x`` moved by it each time (the loss returned by
    ``step`` and its backward called outside it)."""
    seen = []
    for _ in range(STEPS):
        x.grad = None
        step(x, y).backward()
        seen.append(x.grad.tolist())
        with torch.no_grad():
            x.sub_(0.1 * x.grad)
    return seen
