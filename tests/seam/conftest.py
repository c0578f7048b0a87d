"""Shared pieces of the seam suite: a tiny seeded model and a child-process runner."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from seam import Backend

ROOT = Path(__file__).resolve().parents[2]


class TinyModel:
    """Two seeded linear layers with a residual, a norm and a softmax: many kinds of op."""

    def __init__(self, backend: Backend, hidden: int = 16, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.w1 = backend.to_device(torch.randn(hidden, hidden, generator=g) / hidden**0.5)  # [H, H]
        self.w2 = backend.to_device(torch.randn(hidden, hidden, generator=g) / hidden**0.5)  # [H, H]
        self.bias = backend.to_device(torch.randn(hidden, generator=g))  # [H]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(x @ self.w1 + self.bias)  # [B, H]
        h = torch.nn.functional.layer_norm(h + x, h.shape[-1:])
        return torch.softmax(h @ self.w2, dim=-1)  # [B, H]


def run_child(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (switches are read once per process)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=full_env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def no_grad():
    with torch.no_grad():
        yield


@pytest.fixture(autouse=True)
def fresh_counters():
    """Every test starts from zeroed process-wide counters."""
    from seam import reset_graph_break_stats, reset_step_input_stats

    reset_graph_break_stats()
    reset_step_input_stats()
    yield
