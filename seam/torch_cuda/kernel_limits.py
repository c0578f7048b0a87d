"""What a GPU's kernel refuses before it runs where the CPU's kernel of the same operation goes on.

CUDA's 2-D average pooling (``aten/src/ATen/native/cuda/AveragePool2d.cu``, ``avg_pool2d_out_cuda``) hands its
output's element count to its launch as a 32-bit int, ``safe_downcast<int32_t, int64_t>(output.numel())``, which
refuses a count past INT_MAX with ATen's "integer out of range" (``ATen/native/Pool.h``), in either memory format; the
CPU's kernel pools any count. PyTorch's ``test_cuda_kernel_loop_overflow_large`` asks exactly that (an input of 2**31
half elements, kernel 1: refused on the H100; 2**31 - 1 elements pool). Emulated, the device mode asks
``check`` before it runs such an operation on the device (``dispatch.py``, ``_OpInfo.special``), so the refusal
comes before the CPU allocates and pools four GiB or more. The output's size is the operation's own meta kernel's
(torch's shape checks first, as on a GPU), asked only where the input is large enough for the count to come near the
limit. The backward kernel counts in 64 bits where it must (``canUse32BitIndexMath`` picks its index type), so it
takes any size, here as there.
"""

from __future__ import annotations

from typing import Any

import torch

aten = torch.ops.aten

#: ``std::numeric_limits<int32_t>::max()``.
INT32_MAX = 2**31 - 1
#: Below this many input elements no pooling output can pass INT32_MAX (padding is at most half the kernel, and
#: ceil mode adds one row and one column), so the meta kernel is not asked.
_NEAR = INT32_MAX // 4

#: The overloads whose CUDA kernel downcasts its output's element count, each to the functional overload whose meta
#: kernel gives that output's shape (an ``out=`` form's output is the functional form's).
CHECKED = {aten.avg_pool2d.default: aten.avg_pool2d.default, aten.avg_pool2d.out: aten.avg_pool2d.default}


def check(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse, in ATen's words, an operation of ``CHECKED`` whose output count a 32-bit int cannot hold: the
    functional overload's meta kernel, run on a meta copy of the input, gives the count."""
    functional = CHECKED.get(func)
    if functional is None or not args or not isinstance(args[0], torch.Tensor) or args[0].numel() < _NEAR:
        return
    source = args[0]
    meta = torch.empty_strided(source.shape, source.stride(), dtype=source.dtype, device="meta")
    rest = {k: v for k, v in kwargs.items() if k != "out"}
    if functional(meta, *args[1:], **rest).numel() > INT32_MAX:
        raise RuntimeError("integer out of range")
