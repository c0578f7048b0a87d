"""A copy to a device index the machine lacks is refused, on both arms: on a GPU ``x.to("cuda:1")`` and ``x.cuda(1)``
allocate on device 1, which CUDA refuses ("invalid device ordinal"). The emulated ``Tensor.to`` and ``Tensor.cuda``
read only the device's type and made the copy on ``cuda:0`` (session 41: ``torch.cuda.comm.scatter`` to devices
``[0, 1]`` "worked"); ``seam/torch_cuda/tensor_methods.py`` now hands the index to the allocation.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

COPIES: dict[str, Callable[[torch.Tensor, torch.Tensor], Any]] = {
    "device_to_cuda_1": lambda x, h: x.to("cuda:1"),
    "host_to_cuda_1": lambda x, h: h.to("cuda:1"),
    "device_cuda_1": lambda x, h: x.cuda(1),
    "host_cuda_1": lambda x, h: h.cuda(1),
    "device_to_a_torch_device_non_blocking": lambda x, h: x.to(torch.device("cuda", 1), non_blocking=True),
    "device_to_cuda_1_and_a_dtype": lambda x, h: x.to("cuda:1", torch.float64),
}
STAYS: dict[str, Callable[[torch.Tensor, torch.Tensor], Any]] = {
    "to_cuda_0": lambda x, h: x.to("cuda:0"),
    "cuda_0": lambda x, h: x.cuda(0),
    "to_cuda": lambda x, h: x.to("cuda"),
    "cuda": lambda x, h: x.cuda(),
}


def _one_device() -> None:
    if torch.cuda.device_count() > 1:
        pytest.skip("this machine has a second device: index 1 is there")


@pytest.mark.parametrize("copy", sorted(COPIES))
def test_a_copy_to_device_1_is_an_invalid_ordinal(torch_cuda: str, copy: str) -> None:
    _one_device()
    x, h = torch.ones(2, device="cuda"), torch.ones(2)
    with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"):
        COPIES[copy](x, h)


@pytest.mark.parametrize("copy", sorted(STAYS))
def test_a_copy_to_device_0_of_a_device_tensor_is_the_tensor_itself(torch_cuda: str, copy: str) -> None:
    x, h = torch.ones(2, device="cuda"), torch.ones(2)
    assert STAYS[copy](x, h) is x
