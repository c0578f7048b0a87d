"""The three eager functions the CUDA graph tree tests compile (``torch.compile(mode="reduce-overhead")``): a matmul
and relu, then one of two element-wise tails, so the tree grows two paths (as ``scripts/graph_trees_probe.py``)."""

from __future__ import annotations

from typing import Any, Callable

import torch


def eager_functions() -> tuple[Callable[..., Any], ...]:
    """The three functions, over a weight drawn after ``torch.manual_seed(0)`` on the device."""
    torch.manual_seed(0)
    w = torch.randn(8, 8, device="cuda")
    return lambda x: (x @ w).relu(), lambda y: y * 2 + 1, lambda y: y.sin() - 3
