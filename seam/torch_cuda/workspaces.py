"""cuBLAS and cuBLASLt workspaces: device memory torch's matrix products take from the caching allocator.

As torch 2.11 makes them on the H200 (device probe of session 14, ``.probe/s14_probe3.py``):

- the first cuBLAS operation (``mm``, ``bmm``, ``mv``, ``dot``, ``addmm``, ``baddbmm``, ...) of a thread on a
  stream allocates that thread's cuBLAS workspace for the stream: 32 MiB on a Hopper device (torch's default,
  or what ``CUBLAS_WORKSPACE_CONFIG`` asks: ``:SIZE_KiB:COUNT`` pairs summed), on the current stream, in the
  pool an allocation there goes to (the graph's private pool while the stream captures). Torch keys it by
  the thread's handle and the stream; it lives until ``torch._C._cuda_clearCublasWorkspaces()``.
- an ``addmm`` whose bias is one row added to every row (``linear`` with a bias) or ``_addmm_activation`` runs
  through cuBLASLt, which first allocates a workspace of its own per stream: 1 MiB (``CUBLASLT_WORKSPACE_SIZE``
  in KiB), kept as the cuBLAS one is (the H200 shows it still allocated after the call, and the next such product
  on the stream takes none: ``tests/torch_cuda/test_cublas_workspaces_come_from_the_caching_allocator.py``).

The allocation comes after the operation's result, as on a GPU (the kernel is launched once its output is
allocated). Worked example: ``x @ w`` on a fresh stream moves ``memory_allocated()`` by the result AND 32 MiB;
the same product again by the result alone.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Any

import torch

from seam.torch_cuda.kinds import note_allocation
from seam.torch_cuda.runtime import runtime

aten = torch.ops.aten
_ADDMM = aten.addmm.default
_ADDMM_ACTIVATION = getattr(aten, "_addmm_activation").default if hasattr(aten, "_addmm_activation") else None
_LT_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
#: torch's default on a device of compute capability 9 (the emulated device is an H200).
_DEFAULT_CUBLAS = 4096 * 1024 * 8
_DEFAULT_LT_KIB = 1024


def cublas_size() -> int:
    """torch's ``getChosenWorkspaceSize``: ``CUBLAS_WORKSPACE_CONFIG``'s ``:SIZE_KiB:COUNT`` pairs, summed."""
    config = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    if not config:
        return _DEFAULT_CUBLAS
    pairs = re.findall(r":(\d+):(\d+)", config)
    return sum(int(size) * 1024 * int(count) for size, count in pairs) if pairs else _DEFAULT_CUBLAS


def lt_size() -> int:
    kib = os.environ.get("CUBLASLT_WORKSPACE_SIZE", "")
    return (int(kib) if kib.isdigit() else _DEFAULT_LT_KIB) * 1024


def uses_lt(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether torch runs this product through cuBLASLt (its ``addmm`` rule: a contiguous 1-D bias, beta 1,
    both matrices at least 2 x 2, a floating dtype), as the H200 showed for ``linear`` with and without a bias,
    ``addmm`` with a 1-D and a 2-D bias and with ``beta=0``, and ``_addmm_activation``."""
    if func is _ADDMM_ACTIVATION:
        return True
    if func is not _ADDMM or len(args) < 3:
        return False
    bias, mat1, mat2 = args[:3]
    beta = kwargs.get("beta", args[3] if len(args) > 3 else 1)
    return (beta == 1 and bias.dim() == 1 and bias.is_contiguous() and mat1.dim() == 2 and mat2.dim() == 2
            and mat1.dtype in _LT_DTYPES and min(mat1.shape) > 1 and min(mat2.shape) > 1)


def note(rt: Any, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """After a cuBLAS operation on the device: the workspaces its first use on this stream allocated."""
    stream = rt.current_stream()
    key = ("cublas-workspace", threading.get_ident(), stream._id)
    if key not in rt.workspaces:
        rt.workspaces[key] = None
        note_allocation(rt, key, cublas_size(), None)  # type: ignore[arg-type]
    lt_key = ("cublaslt-workspace", stream._id)
    if lt_key not in rt.workspaces and uses_lt(func, args, kwargs):  # the rule only while the stream has none
        rt.workspaces[lt_key] = None
        note_allocation(rt, lt_key, lt_size(), None)  # type: ignore[arg-type]
    if lt_key in rt.workspaces:  # nothing a product of this thread on this stream can add now
        rt.per_thread.blas_ready, rt.per_thread.blas_for = stream, rt.workspaces


def clear() -> None:
    """``torch._C._cuda_clearCublasWorkspaces``: every workspace freed (their segments stay cached)."""
    rt = runtime()
    for key in rt.workspaces:
        rt.allocator.note_free(key)
    rt.workspaces = {}  # a new dict: each thread's ``blas_ready`` names the old one
