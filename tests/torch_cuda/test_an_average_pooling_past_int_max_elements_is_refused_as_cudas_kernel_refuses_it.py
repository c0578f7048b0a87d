"""A 2-D average pooling whose output has more than INT_MAX elements is refused on the device, as CUDA's kernel
refuses it ("integer out of range": it hands the count to its launch as a 32-bit int), where the CPU's kernel pools
it. PyTorch's ``test_cuda_kernel_loop_overflow_large`` (H100: passed; emulated until session 42: "RuntimeError not
raised"). ``seam/torch_cuda/kernel_limits.py``.

The refused inputs are one half element expanded to 2**31 (no memory of their own; a GPU copies it to a contiguous
4 GiB before it counts, the emulation refuses before the CPU is asked). The largest count that passes is checked
against the emulator's own limit without pooling two billion elements on a CPU.
"""

from __future__ import annotations

import pytest
import torch

from seam.torch_cuda import kernel_limits

BIG = 2**31


def _expanded(*shape: int) -> torch.Tensor:
    return torch.zeros(1, device="cuda", dtype=torch.float16).expand(*shape)


@pytest.mark.parametrize("shape, kwargs", [
    ((1, 1, 1, BIG), {"kernel_size": 1}),
    ((1, 1, 2, BIG), {"kernel_size": (2, 1)}),  # the output, not the input, is counted: 2**31 of 2**32
    ((BIG, 1, 1, 1), {"kernel_size": 1, "ceil_mode": True}),
], ids=["a_row_of_2_31", "kernel_2_by_1_over_2_rows", "planes_ceil_mode"])
def test_an_output_of_more_than_int_max_elements_is_refused(torch_cuda: str, shape: tuple[int, ...],
                                                             kwargs: dict[str, object]) -> None:
    with pytest.raises(RuntimeError, match="integer out of range"):
        torch.nn.functional.avg_pool2d(_expanded(*shape), **kwargs)


def test_a_small_pooling_and_its_backward_run_on_the_device(torch_cuda: str) -> None:
    x = torch.arange(16.0, device="cuda").reshape(1, 1, 4, 4).requires_grad_()
    y = torch.nn.functional.avg_pool2d(x, 2)
    y.sum().backward()
    assert y.device == torch.device("cuda", 0)
    assert y.flatten().tolist() == [2.5, 4.5, 10.5, 12.5]
    assert x.grad.flatten().tolist() == [0.25] * 16


def test_the_limit_is_int_max_of_the_outputs_elements() -> None:
    aten = torch.ops.aten
    below = torch.zeros(1, dtype=torch.float16).expand(1, 1, 2, BIG - 1)
    kernel_limits.check(aten.avg_pool2d.default, (below, [2, 1]), {})  # 2**31 - 1 elements: taken
    at = torch.zeros(1, dtype=torch.float16).expand(1, 1, 2, BIG)
    with pytest.raises(RuntimeError, match="integer out of range"):
        kernel_limits.check(aten.avg_pool2d.default, (at, [2, 1]), {})
    with pytest.raises(RuntimeError, match="integer out of range"):  # the out= form counts its output the same
        kernel_limits.check(aten.avg_pool2d.out, (at, [2, 1]), {"out": torch.empty(0, dtype=torch.float16)})
