"""``get_allocator_backend``, ``memory_stats_as_nested_dict`` and ``ipc_collect`` answer on the device as torch's do.

A CPU-only torch lacks the ``torch._C`` functions behind them (``_cuda_getAllocatorBackend``, ``_cuda_memoryStats``,
``_cuda_ipc_collect``), so they raised AttributeError inside the emulation (``seam/torch_cuda/device.py``).
"""

from __future__ import annotations

from typing import Any

import torch


def _flattened(nested: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in nested.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flattened(value, name + "."))
        else:
            out[name] = value
    return out


def test_the_allocator_backend_is_torchs_native_one(torch_cuda: str) -> None:
    assert torch.cuda.get_allocator_backend() == "native"


def test_the_nested_figures_are_memory_stats_by_their_dotted_keys(torch_cuda: str) -> None:
    held = torch.empty(1000, device="cuda")
    nested = torch.cuda.memory_stats_as_nested_dict()
    flat = torch.cuda.memory_stats()
    assert nested["allocated_bytes"]["all"]["current"] == flat["allocated_bytes.all.current"] >= held.nbytes
    assert _flattened(nested) == dict(flat)
    assert torch.cuda.memory.memory_stats_as_nested_dict() == nested


def test_ipc_collect_returns_nothing(torch_cuda: str) -> None:
    torch.ones(1, device="cuda")
    assert torch.cuda.ipc_collect() is None
