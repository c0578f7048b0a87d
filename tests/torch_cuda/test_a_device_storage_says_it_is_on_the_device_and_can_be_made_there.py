"""A device tensor's storage says it is on the device, and a storage can be made there, as on a GPU.

torch's ``UntypedStorage.device`` read the CPU under emulated device memory (``x.untyped_storage().device`` said
``cpu``, ``storage.cpu()`` gave the device memory back), and a CPU-only build refused ``torch.UntypedStorage(n,
device="cuda")``, which ``Tensor.type(torch.cuda.FloatTensor)`` and ``storage.cuda()`` call: PyTorch's
``test_type_conversions`` and ``test_serialization_array_with_storage`` passed on the H100 at dfdac4d and failed
emulated ("Storage device not recognized: cuda"). ``seam/torch_cuda/storages.py``.
"""

from __future__ import annotations

import warnings

import pytest
import torch

CUDA0 = torch.device("cuda", 0)


def test_a_device_tensors_storage_is_on_the_device_and_its_cpu_copy_is_not(torch_cuda: str) -> None:
    x = torch.arange(4.0, device="cuda")
    storage = x.untyped_storage()
    assert storage.device == CUDA0 and storage.is_cuda
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # TypedStorage is deprecated
        assert x.storage().device == CUDA0 and x.storage().is_cuda
    host = storage.cpu()
    assert host.device.type == "cpu" and not host.is_cuda
    assert torch.tensor([], dtype=torch.float32).set_(host).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert torch.ones(2).untyped_storage().device.type == "cpu"


def test_a_storage_asked_for_on_the_device_is_device_memory(torch_cuda: str) -> None:
    sized = torch.UntypedStorage(16, device="cuda")
    assert sized.device == CUDA0 and sized.nbytes() == 16
    values = torch.UntypedStorage([1, 2, 3], device="cuda")
    on_it = torch.tensor([], dtype=torch.uint8, device="cuda").set_(values)
    assert on_it.device == CUDA0 and on_it.cpu().tolist() == [1, 2, 3]
    moved = torch.UntypedStorage([4, 5]).cuda()
    assert moved.device == CUDA0 and moved.tolist() == [4, 5]


def test_a_host_tensor_converted_to_a_cuda_type_is_a_device_tensor(torch_cuda: str) -> None:
    x = torch.randn(5, 5)
    y = x.type(torch.cuda.FloatTensor)
    assert y.is_cuda and y.device == CUDA0 and torch.equal(y.cpu(), x)


def test_a_storage_on_a_device_the_machine_lacks_is_refused(torch_cuda: str) -> None:
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.UntypedStorage(4, device=f"cuda:{torch.cuda.device_count()}")
