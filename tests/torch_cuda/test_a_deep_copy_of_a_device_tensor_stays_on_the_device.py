"""``copy.deepcopy`` of a device tensor is a device tensor with the same values and its own memory.

torch's ``Tensor.__deepcopy__`` clones the STORAGE (``UntypedStorage.clone``, which never reaches the
dispatcher) and sets a fresh tensor on it; a module's buffers are deep-copied that way. A reference
model made with ``copy.deepcopy(model)`` (breakable- and piecewise-cuda-graphs' training-step tests,
EMA copies in engines) must stay on the device, or its first matmul mixes devices.
"""

from __future__ import annotations

import copy

import torch


def test_a_deep_copied_device_tensor_is_on_cuda_with_its_own_memory(torch_cuda: str) -> None:
    original = torch.arange(6.0, device="cuda").view(2, 3)
    copied = copy.deepcopy(original)
    assert copied.device == torch.device("cuda", 0)
    assert copied.is_cuda
    assert copied.untyped_storage().data_ptr() != original.untyped_storage().data_ptr()
    original.add_(1)
    assert copied.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_a_deep_copied_modules_buffers_stay_on_cuda_and_its_forward_runs(torch_cuda: str) -> None:
    model = torch.nn.Linear(3, 2)
    model.register_buffer("scale", torch.full((2,), 2.0))
    model = model.cuda()
    ref = copy.deepcopy(model)
    assert ref.scale.device == torch.device("cuda", 0)
    x = torch.ones(4, 3, device="cuda")
    # The buffer joins a kernel with the copied parameters: mixing devices would be refused here.
    out = torch.addmm(ref.bias, x, ref.weight.t()) * ref.scale
    expected = (model(x) * model.scale).tolist()
    assert out.tolist() == expected


def test_a_deep_copied_host_tensor_stays_on_the_host(torch_cuda: str) -> None:
    host = torch.arange(3.0)
    copied = copy.deepcopy(host)
    assert copied.device == torch.device("cpu")
    assert not copied.is_pinned()
