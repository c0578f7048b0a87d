"""Half-precision matrix products and convolutions on the emulated device, computed in fp32 and rounded once.

cuBLAS's float16 GEMM (``cublasGemmEx`` with ``CUBLAS_COMPUTE_32F``, what torch calls for ``mm``, ``addmm``, ``bmm``,
``baddbmm`` and the rest on half tensors) multiplies and accumulates in fp32 and rounds the result to fp16 once, and
so does cuDNN's float16 convolution (torch sets the convolution descriptor's math type to float for half data), its
backward too. A CPU build of torch has float16 kernels of its own, and on a CPU without fp16 arithmetic they are
hundreds of times slower than its fp32 ones (this project's machine, one thread: 36.5 s for a 640 x 4096 x 2048 ``mm``
in fp16, 0.12 s in fp32; a [8, 64, 32, 32] x [64, 64, 3, 3] ``conv2d`` 0.59 s, 0.007 s in fp32), and they round
partial sums (a 256 x 256 x 256 product differed from the fp32 one rounded by up to 0.8 %). Code under
``torch.autocast("cuda")``, which runs every matrix product and convolution in fp16, took minutes a step emulated
(PyTorch's ``test_graph_make_graphed_callables`` with amp). On the device an operation of this kind whose
tensors are all float16 runs as the fp32 operation on fp32 copies of them, each tensor of its result rounded to fp16:
with the device mode on, so the copies, the operation and the rounding are device work (recorded in a capture,
replayed; the operation notes cuBLAS's or cuDNN's handle as any other).
"""

from __future__ import annotations

from typing import Any

import torch

from seam.op_args import map_leaves

#: cuDNN's convolution, forward and backward: with the operations cuBLAS runs (``dispatch._BLAS``), the route's.
CONVOLUTIONS = frozenset({torch.ops.aten.convolution.default, torch.ops.aten.convolution_backward.default})


def all_half(values: Any) -> bool:
    """Whether the call's tensors (its positional and keyword values) are all float16, and there is one."""
    seen = False
    for value in values:
        if isinstance(value, torch.Tensor):
            if value.dtype != torch.float16:
                return False
            seen = True
    return seen


def run(func: Any, *args: Any, **kwargs: Any) -> Any:
    """``func`` on fp32 copies of its float16 tensors, each tensor of its result rounded to float16 (run under the
    device mode)."""
    def up(value: Any) -> Any:
        return value.float() if isinstance(value, torch.Tensor) else value
    result = func(*[up(a) for a in args], **{k: up(v) for k, v in kwargs.items()})
    return map_leaves(lambda t: t.half() if isinstance(t, torch.Tensor) else t, result)
