"""What torch reads from the CUDA runtime and a few device settings, on the emulated device.

- ``torch.cuda.cudart()`` (and ``torch.cuda.check_error``, ``torch.cuda.CudaError``): a stand-in for torch's
  bindings of the CUDA runtime: ``cudaError`` (the codes by their CUDA names), ``cudaGetErrorString`` (CUDA's
  words), the profiler switches and host registration (``cudaHostRegister``/``cudaHostUnregister``: pinned in
  place, ``host_cache.py``); a call that fails leaves its error as the thread's last error, which the next kernel
  launch raises (``LAST_ERROR``);
- ``torch.cuda.nvtx`` (``torch._C._nvtx``): NVTX with no profiling tool attached;
- ``torch.cuda.current_blas_handle()``: one stable handle per thread, as cuBLAS's;
- ``torch.cuda.Stream.priority_range()``; priorities clamped into it, as CUDA does;
- ``set_per_process_memory_fraction`` / ``get_per_process_memory_fraction``: kept and checked as torch does, and
  the fraction of the emulated device's memory bounds what the allocator reserves (``allocator.py``, ``limit``);
- ``torch.cuda.host_memory_stats()`` and its resets: the H200's answers under torch 2.11 in a fresh process
  (no figures, even after pinned allocations; the resets answer ``None``).

Not modelled: the pinned allocator's figures the H200 counts after more work (a suite's worth: 29 keys; what
starts them is owed).
"""

from __future__ import annotations

import enum
import threading
from typing import Any

import torch

from seam.torch_cuda import cuda_errors, host_cache
from seam.torch_cuda.device import TOTAL_MEMORY
from seam.torch_cuda.runtime import runtime

#: The H200's stream priority range (lowest, greatest) as torch reports it, torch 2.11.
PRIORITY_RANGE = (0, -3)


class cudaError(enum.IntEnum):  # noqa: N801 - torch's name for CUDA's enum
    success = 0
    invalid_value = 1
    memory_allocation = 2
    initialization_error = 3
    host_memory_already_registered = 712
    host_memory_not_registered = 713


_ERROR_STRINGS = {0: "no error", 1: "invalid argument", 2: "out of memory", 3: "initialization error",
                  712: "part or all of the requested memory range is already mapped",
                  713: "pointer does not correspond to a registered memory region"}
#: The thread's last CUDA error (none, or one code): a runtime call that fails leaves it, as CUDA does, and torch's
#: check after the next kernel launch (``C10_CUDA_KERNEL_LAUNCH_CHECK``: ``cudaGetLastError``) raises it once
#: (``dispatch.py``; H100, session 25: a refused ``cudaHostUnregister`` made the next ``normal_`` raise its words).
LAST_ERROR: list[int] = []


def _failed(code: "cudaError") -> "cudaError":
    """A runtime call's failure: its code, kept as the last error."""
    LAST_ERROR[:] = [int(code)]
    return code


def take_last_error() -> RuntimeError:
    """The last error as torch raises it after a kernel launch (``cudaGetLastError`` resets it)."""
    code = cudaError(LAST_ERROR.pop())
    # CUDA's symbol from the enum's name: host_memory_not_registered -> cudaErrorHostMemoryNotRegistered
    symbol = "cudaError" + "".join(part.title() for part in code.name.split("_"))
    return cuda_errors.cuda_error_exactly(f"CUDA error: {_ERROR_STRINGS[code]}", symbol)


class CudaRuntime:
    """``torch._C._cudart`` on the emulated device."""

    cudaError = cudaError

    @staticmethod
    def cudaGetErrorString(code: Any) -> str:  # noqa: N802 - CUDA's name
        return _ERROR_STRINGS.get(int(code), "unknown error")

    @staticmethod
    def cudaProfilerStart() -> int:  # noqa: N802
        return 0

    @staticmethod
    def cudaProfilerStop() -> int:  # noqa: N802
        return 0

    @staticmethod
    def cudaHostRegister(ptr: int, size: int, flags: int) -> cudaError:  # noqa: N802
        """Pin host memory in place (``host_cache.register``): ``is_pinned()`` says so until it is unregistered."""
        ok = host_cache.register(ptr, size)
        return cudaError.success if ok else _failed(cudaError.host_memory_already_registered)

    @staticmethod
    def cudaHostUnregister(ptr: int) -> cudaError:  # noqa: N802
        return cudaError.success if host_cache.unregister(ptr) else _failed(cudaError.host_memory_not_registered)


CUDART = CudaRuntime()


class Nvtx:
    """``torch._C._nvtx`` (what ``torch.cuda.nvtx`` calls) on the emulated device: NVTX with no profiling tool
    attached, as under a plain test run: push and pop answer ``NVTX_NO_PUSH_POP_TRACKING`` (-2), a started range's
    handle is 0, marks and ends do nothing."""

    @staticmethod
    def rangePushA(msg: str) -> int:  # noqa: N802 - NVTX's names
        return -2

    @staticmethod
    def rangePop() -> int:  # noqa: N802
        return -2

    @staticmethod
    def rangeStartA(msg: str) -> int:  # noqa: N802
        return 0

    @staticmethod
    def rangeEnd(range_id: int) -> None:  # noqa: N802
        return None

    @staticmethod
    def markA(msg: str) -> None:  # noqa: N802
        return None


NVTX = Nvtx()
_handles = threading.local()


def current_blas_handle() -> int:
    """``torch._C._cuda_getCurrentBlasHandle``: an address-like integer, the same for a thread's calls."""
    handle = getattr(_handles, "blas", None)
    if handle is None:
        handle = _handles.blas = 0x7E000000 + 0x1000 * (threading.get_ident() % 4096)
    return handle


def priority_range() -> tuple[int, int]:
    return PRIORITY_RANGE


def clamp_priority(priority: int) -> int:
    """CUDA's rule: a priority outside the device's range is clamped into it."""
    lowest, greatest = PRIORITY_RANGE
    return max(greatest, min(lowest, int(priority)))


_fraction = [1.0]


def set_memory_fraction(fraction: float, device: int = 0) -> None:
    """``torch._C._cuda_setMemoryFraction`` (torch's Python wrapper has checked the type and range): as CUDA's
    allocator, from now on it reserves at most this fraction of the device (``set_fraction`` stays on). What was
    allocated before is played into the model first, without the limit: it stays, and counts as reserved."""
    _fraction[0] = float(fraction)
    allocator = runtime().allocator
    allocator.flush()
    allocator.set_limit(int(fraction * TOTAL_MEMORY))


def get_memory_fraction(device: int = 0) -> float:
    return _fraction[0]


def host_memory_stats() -> dict[str, Any]:
    """``torch._C._cuda_hostMemoryStats``: empty, as torch 2.11 answers on the H200."""
    return {}


def reset_host_memory_stats() -> None:
    """``torch._C._cuda_resetPeakHostMemoryStats`` and ``_cuda_resetAccumulatedHostMemoryStats``."""
    return None


def reset() -> None:
    """A fresh device's settings (the outermost ``emulate_cuda()``): no last error, no out-of-memory observer."""
    _fraction[0] = 1.0
    LAST_ERROR.clear()
    cuda_errors.OOM_OBSERVERS.clear()


def patches() -> list[tuple[Any, str, Any]]:
    """What ``emulate_cuda()`` puts in place (``install.py``)."""
    functions = {"_cudart": CUDART, "_cuda_getCurrentBlasHandle": current_blas_handle,
                 "_cuda_setMemoryFraction": set_memory_fraction, "_cuda_getMemoryFraction": get_memory_fraction,
                 "_cuda_hostMemoryStats": host_memory_stats, "_cuda_resetPeakHostMemoryStats": reset_host_memory_stats,
                 "_cuda_resetAccumulatedHostMemoryStats": reset_host_memory_stats,
                 "_cuda_attach_out_of_memory_observer": cuda_errors.OOM_OBSERVERS.append}
    out: list[tuple[Any, str, Any]] = [(torch._C, name, value) for name, value in functions.items()]
    out.append((torch.cuda, "_cudart", CUDART))
    out.append((torch.cuda.nvtx, "_nvtx", NVTX))
    return out
