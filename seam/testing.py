"""Small seeded models for the seam's own tests and benchmarks (no driver logic here)."""

from __future__ import annotations

import torch

from seam.backend import Backend


class TinyModel:
    """A stack of seeded residual MLP blocks with a norm and a softmax head: many kinds of op."""

    def __init__(self, backend: Backend, hidden: int = 16, layers: int = 1, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        scale = hidden**-0.5
        self.w1 = [backend.to_device(torch.randn(hidden, hidden, generator=g) * scale) for _ in range(layers)]  # [H, H]
        self.bias = [backend.to_device(torch.randn(hidden, generator=g)) for _ in range(layers)]  # [H]
        self.w2 = backend.to_device(torch.randn(hidden, hidden, generator=g) * scale)  # [H, H]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x  # [B, H]
        for w, b in zip(self.w1, self.bias):
            h = torch.nn.functional.layer_norm(torch.nn.functional.gelu(h @ w + b) + h, h.shape[-1:])
        return torch.softmax(h @ self.w2, dim=-1)  # [B, H]
