"""A ``FakeTensorMode`` entered on the device (code that works out shapes without memory, as engines do before they
allocate) makes fake tensors on ``cuda:0``, and their operations give fake device tensors, as on a GPU build.

torch runs its fake mode after every other dispatch mode, so the emulation's device mode saw each operation first:
a factory's fake came out on the host, and indexing one raised "operator prim::device does not exist" (the device
mode asked the dispatcher about TorchScript's ``prim::device``, which it does not know). The device mode now leaves
an operation to a fake mode that is on (``seam/torch_cuda/dispatch.py``); a CPU-only torch indexes a fake CUDA tensor
with the device guard the emulation gives it (``seam/torch_cuda/device_guard.py``).
"""

from __future__ import annotations

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode


def test_a_fake_tensor_mode_entered_on_the_device_makes_fake_device_tensors(torch_cuda: str) -> None:
    with FakeTensorMode():
        weight = torch.empty(8, 4, device="cuda")
        hidden = (weight[2:5] @ torch.ones(4, 3, device="cuda")).relu()
        ids = torch.zeros(5, dtype=torch.long, device="cuda")
        rows = weight[ids]
        host = torch.empty(3)
    assert all(isinstance(t, FakeTensor) for t in (weight, hidden, rows, host))
    assert [t.device for t in (weight, hidden, rows)] == [torch.device("cuda", 0)] * 3
    assert host.device == torch.device("cpu")
    assert (tuple(hidden.shape), tuple(rows.shape)) == ((3, 3), (5, 4))
    # the device itself is as it was: real device tensors after the fake mode
    real = torch.ones(2, device="cuda") * 3
    assert not isinstance(real, FakeTensor) and real.is_cuda and real.tolist() == [3.0, 3.0]
