"""``torch.jit.script`` of code that calls torch's functions scripts on both arms, and runs on the device.

The emulation replaces some torch functions with Python wrappers (``torch.randn`` and the other factories:
``seam/torch_cuda/ordinals.py``); TorchScript, which knows torch's functions by identity, tried to compile the
wrappers' source and raised a TypeError (PyTorch's ``test_autocast_cat_jit`` passed on the H100 and failed
emulated). ``seam/torch_cuda/scripting.py``.
"""

from __future__ import annotations

import warnings

import pytest
import torch


class _Model(torch.nn.Module):
    def forward(self) -> torch.Tensor:
        a = torch.randn(1)
        b = torch.randn(1)
        c = torch.cat((a, b), 0)
        return torch.stack([c, c], 0)


def _script(obj):  # torch.jit.script is deprecated in newer torch: its warning is not this test's concern
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return torch.jit.script(obj)


def test_a_scripted_module_calling_factories_runs_under_cuda_autocast(torch_cuda: str) -> None:
    scripted = _script(_Model())
    with torch.autocast("cuda", enabled=True):
        out = scripted()
    assert out.shape == (2, 2) and torch.equal(out[0], out[1])


def _on_device(n: int) -> torch.Tensor:
    x = torch.ones(n, device="cuda")
    y = torch.arange(n, device="cuda", dtype=torch.float32)
    return torch.cat((x, y)) * 2


def test_a_scripted_function_makes_its_tensors_on_the_device(torch_cuda: str) -> None:
    scripted = _script(_on_device)
    out = scripted(3)
    assert out.device == torch.device("cuda", 0)
    assert out.cpu().tolist() == [2.0, 2.0, 2.0, 0.0, 2.0, 4.0]


def test_leaving_the_emulation_takes_its_builtins_out() -> None:
    from seam import emulate_cuda
    from torch.jit import _builtins

    before = dict(_builtins._get_builtin_table())
    with emulate_cuda():
        wrapper = torch.randn
        assert _builtins._find_builtin(wrapper) == "aten::randn"
    assert _builtins._get_builtin_table() == before
    assert _builtins._find_builtin(torch.randn) == "aten::randn"
