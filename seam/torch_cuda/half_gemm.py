"""Half-precision matrix products on the emulated device, as cuBLAS computes them: in fp32, rounded once.

cuBLAS's float16 GEMM (``cublasGemmEx`` with ``CUBLAS_COMPUTE_32F``, what torch calls for ``mm``, ``addmm``, ``bmm``,
``baddbmm`` and the rest on half tensors) multiplies and accumulates in fp32 and rounds the result to fp16 once. A CPU
build of torch has float16 kernels of its own, and on a CPU without fp16 arithmetic they are hundreds of times slower
than its fp32 ones (this project's machine, one thread: 36.5 s for a 640 x 4096 x 2048 ``mm`` in fp16, 0.12 s in fp32),
and they round partial sums (a 256 x 256 x 256 product differed from the fp32 one rounded by up to 0.8 %). Code under
``torch.autocast("cuda")``, which runs every matrix product in fp16, took minutes a step emulated (PyTorch's
``test_graph_make_graphed_callables`` with amp). On the device an operation of this kind whose tensors are all float16
(``dispatch._BLAS``, those cuBLAS runs) runs as the fp32 operation on fp32 copies of them, rounded to fp16: with the device mode on, so the copies, the product
and the rounding are device work (recorded in a capture, replayed; the product notes cuBLAS's handle as any other).
"""

from __future__ import annotations

from typing import Any

import torch


def all_half(values: Any) -> bool:
    """Whether the call's tensors (its positional and keyword values) are all float16, and there is one."""
    seen = False
    for value in values:
        if isinstance(value, torch.Tensor):
            if value.dtype != torch.float16:
                return False
            seen = True
    return seen


def run(func: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
    """``func`` on fp32 copies of its float16 tensors, its result rounded to float16 (run under the device mode)."""
    def up(value: Any) -> Any:
        return value.float() if isinstance(value, torch.Tensor) else value
    return func(*[up(a) for a in args], **{k: up(v) for k, v in kwargs.items()}).half()
