"""torch's own exception classes and words for what CUDA refuses (as the H200 says them, torch 2.11).

A caller's ``except RuntimeError`` and ``pytest.raises(..., match=...)`` must mean the same on the
emulator and on a GPU, so every refusal of the emulated ``torch.cuda`` is built here: CUDA runtime
errors are ``torch.AcceleratorError`` (a ``RuntimeError``) with CUDA's first line, torch's own checks
are ``RuntimeError`` with torch's text. A second line says that the emulator raised it, and why, except
where a library matches the words (``cuda_error_exactly``): there the message is torch's, whole.
"""

from __future__ import annotations

from typing import Any

import torch

NOT_PERMITTED = "CUDA error: operation not permitted when stream is capturing"
INVALIDATED = "CUDA error: operation failed due to a previous error during capture"
UNJOINED = "CUDA error: capturing stream has unjoined work"
UNCAPTURED_DEPENDENCY = "CUDA error: dependency created on uncaptured work in another stream"
CUBLAS_NOT_INITIALIZED = "CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`"
PAGEABLE_COPY = ("Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is "
                 "pinned. Please use tensor.pin_memory() or allocate the tensor with pin_memory=True.")
ALREADY_CAPTURED = ("This CUDAGraph instance already owns a captured graph. To capture a new graph, create a new "
                    "instance.")
DEFAULT_STREAM_CAPTURE = ("CUDA graphs must be captured on a non-default stream. (However, after capture, it's ok to "
                          "replay them on the default stream.)")
REPLAY_WITHOUT_CAPTURE = "Called CUDAGraph::replay without a preceding successful capture."
PRESENT_STATE = "CUDA error: the operation cannot be performed in the present state"
#: The caching allocator's refusal to record a second time to a pool it records to (``use_mem_pool`` or a
#: capture), in any thread (H200, torch 2.11: ``nested_uses_of_mempools_refuse_a_pool_already_recorded_to``).
ALREADY_RECORDING = "beginAllocateToPool: already recording to mempool_id"
#: ``endAllocateToPool`` of a pool no entry records to (c10/cuda/CUDACachingAllocator.cpp; ``routes.py``).
NOT_RECORDING = "endAllocatePool: not currently recording to mempool_id"
OTHER_THREAD_END = "CUDA error: attempt to terminate a thread-local capture sequence from another thread"
INVALID_ORDINAL = "CUDA error: invalid device ordinal"
INVALID_ARGUMENT = "CUDA error: invalid argument"
EVENT_IN_CAPTURE = "CUDA error: operation not permitted on an event last recorded in a capturing stream"
CUDNN_NOT_INITIALIZED = "cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"
SAME_STREAM = "Capture must end on the same stream it began on."
POOL_WITHOUT_CAPTURE = "Called CUDAGraph::pool() without a preceding successful capture."
SEED_IN_CAPTURE = ("CUDAGeneratorImpl::set_current_seed can be called during stream capture only if new seed is the "
                   "same as the original seed.")


def during_capture(what: str) -> str:
    """torch's words for one of its own calls made while the current stream captures."""
    return (f"{what} during capturing stage. during CUDA graph capture. If you need this call to be captured, please "
            "file an issue. "
            "Current cudaStreamCaptureStatus: cudaStreamCaptureStatusActive")


def not_capturing(what: str) -> str:
    """torch's words (``assertNotCapturing``) for a call it refuses while the current stream captures."""
    return (f"{what} during CUDA graph capture. If you need this call to be captured, please file an issue. "
            "Current cudaStreamCaptureStatus: cudaStreamCaptureStatusActive")


EMPTY_GRAPH = ("The CUDA Graph is empty. This usually means that the graph was attempted to be captured on wrong "
               "device or stream.")

_AcceleratorError: type[RuntimeError] = getattr(torch, "AcceleratorError", RuntimeError)


def cuda_error(first_line: str, why: str) -> RuntimeError:
    """A CUDA runtime error as torch raises it, with the emulator's reason on the next line."""
    return _AcceleratorError(f"{first_line}\n(seamgate's CUDA emulator: {why})")


def cuda_error_exactly(first_line: str, symbol: str) -> RuntimeError:
    """A CUDA runtime error in torch's whole words (``C10_CUDA_CHECK``'s, as the H200 prints them), no more.

    For refusals that libraries translate by matching their words (an unjoined capture: breakable- and
    piecewise-cuda-graphs match ``unjoined`` or ``not joined``): an emulator's reason could hold a word
    the library matches, and so make a wrong match pass on the emulator alone. ``symbol`` is the
    ``cudaError_t`` name torch points at, e.g. ``cudaErrorStreamCaptureUnjoined``.
    """
    return _AcceleratorError(
        f"{first_line}\n"
        f"Search for `{symbol}' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for "
        "more information.\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
        "be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")


def torch_check(ok: bool, text: str) -> None:
    """torch's ``TORCH_CHECK`` as the C++ the emulator writes again says it (``nccl_direct.py``, ``cuda_comm.py``):
    where ``ok`` is False, a ``RuntimeError`` of torch's whole words, the same on both arms."""
    if not ok:
        raise RuntimeError(text)


def torch_error(text: str, why: str) -> RuntimeError:
    """One of torch's own ``RuntimeError`` checks, with the emulator's reason on the next line."""
    return RuntimeError(f"{text}\n(seamgate's CUDA emulator: {why})")


def _size(n: int) -> str:
    """A byte count as the caching allocator's messages print it (``format_size``)."""
    if n <= 1024:
        return f"{n} bytes"
    for unit, scale in (("KiB", 2**10), ("MiB", 2**20)):
        if n <= scale * 1024:
            return f"{n / scale:.2f} {unit}"
    return f"{n / 2**30:.2f} GiB"


#: The caching allocator refuses any request of this size or more before it looks at the device (torch 2.11).
ONE_EXA_BYTE = 2**60


def out_of_memory_past_one_exa_byte() -> Exception:
    """``torch.OutOfMemoryError`` for a request of ``ONE_EXA_BYTE`` or more, in the caching allocator's words."""
    return torch.OutOfMemoryError("CUDA out of memory. Tried to allocate more than 1EB memory.")


#: ``torch._C._cuda_attach_out_of_memory_observer``'s callbacks, told of each out-of-memory refusal (a fresh device
#: has none: ``runtime_api.reset``).
OOM_OBSERVERS: list[Any] = []


def out_of_memory(tried: int, total: int, free: int, allocated: int, reserved: int, *,
                  allowed: int | None = None, beyond: bool = False) -> Exception:
    """``torch.OutOfMemoryError`` in the caching allocator's words (torch 2.11 on the H200), with the emulator's
    reason below. The process's memory in use is what the allocator reserved (the emulated device runs no CUDA
    context); ``allowed``: the memory fraction's bound (``set_per_process_memory_fraction``), named when set; ``beyond``:
    more than the whole device was asked for (refused before the CPU is asked). The observers attached are told
    first, as the caching allocator tells them before it raises: (device, bytes asked for, the fraction's bound or
    the device's total, free bytes). The 1 EB refusal, made before the allocator looks, tells none."""
    for observer in list(OOM_OBSERVERS):
        observer(0, tried, allowed if allowed is not None else total, free)
    why = (f"the {tried} bytes asked for would take what is reserved past the {allowed} bytes the memory fraction "
           "allows" if allowed is not None else f"the {tried} bytes asked for are more than the device's {total}"
           if beyond else f"the CPU could not allocate the {tried} bytes asked for on the device")
    return torch.OutOfMemoryError(
        f"CUDA out of memory. Tried to allocate {_size(tried)}. GPU 0 has a total capacity of {_size(total)} of "
        f"which {_size(free)} is free. Including non-PyTorch memory, this process has {_size(reserved)} memory in "
        f"use. {f'{_size(allowed)} allowed; ' if allowed is not None else ''}Of the allocated memory "
        f"{_size(allocated)} is allocated by PyTorch, and {_size(max(0, reserved - allocated))} is reserved by "
        "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
        "Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"
        f"\n(seamgate's CUDA emulator: {why})")
