"""``torch._C``'s own ``_cuda_*`` bindings that code written elsewhere calls directly, on the emulated device.

``torch.cuda``'s Python API is emulated name by name; these are the C bindings under it, which a CPU-only build
lacks and some callers use without the API: PyTorch's test harness (``CudaNonDefaultStream`` sets each test's
stream with ``torch._C._cuda_setStream``), custom-kernel launchers (``_cuda_getCurrentRawStream``), allocator
tools (``_cuda_memoryStats``), and torch's own optimizers group their tensors by device
(``_group_tensors_by_device_and_dtype``, whose C++ reads a tensor's real device). Each routes to the emulated runtime, with torch's signature and return shape: a stream
is ``(stream_id, device_index, device_type)``, the tuple torch's ``Stream(stream_id=..., ...)`` takes back.
A CUDA build's own bindings (PyPI's default torch on a machine without a GPU) are replaced too: there they would
ask a CUDA runtime that has no device.
"""

from __future__ import annotations

from typing import Any

import torch

from seam.torch_cuda import accelerator, device, streams
from seam.torch_cuda.runtime import runtime

#: ``c10::DeviceType::CUDA``.
CUDA_TYPE = 1


def _triple(stream: streams.Stream) -> tuple[int, int, int]:
    return stream.stream_id, 0, CUDA_TYPE


def _check(device_index: Any) -> None:
    """CUDA's refusal of a device index the emulated machine lacks (its one device is current already)."""
    if device_index is not None and int(device_index) != 0:
        device.set_device(device_index)


def get_current_stream(device_index: int = 0) -> tuple[int, int, int]:
    """``torch._C._cuda_getCurrentStream(device)``."""
    _check(device_index)
    return _triple(streams.current_stream())


def get_default_stream(device_index: int = 0) -> tuple[int, int, int]:
    """``torch._C._cuda_getDefaultStream(device)``."""
    _check(device_index)
    return _triple(streams.default_stream())


def get_current_raw_stream(device_index: int = 0) -> int:
    """``torch._C._cuda_getCurrentRawStream(device)``: the current ``cudaStream_t``."""
    _check(device_index)
    return streams.current_stream().cuda_stream


def set_stream(stream_id: int = 0, device_index: int = 0, device_type: int = CUDA_TYPE) -> None:
    """``torch._C._cuda_setStream(stream_id=, device_index=, device_type=)``: the stream of that id is current."""
    _check(device_index)
    runtime().set_current(streams.Stream._known(int(stream_id)))


def set_device(index: int) -> None:
    """``torch._C._cuda_setDevice(index)``."""
    device.set_device(index)


def memory_stats(index: int) -> dict[str, Any]:
    """``torch._C._cuda_memoryStats(device)``: the allocator's nested figures."""
    return accelerator._device_stats(index)


_FLOAT_STEPS = (torch.float32, torch.float64)


def group_tensors_by_device_and_dtype(tensorlistlist: Any, with_indices: bool = False) -> dict[Any, Any]:
    """``torch._C._group_tensors_by_device_and_dtype``, under every foreach and fused optimizer: the lists' tensors
    grouped by the (device, dtype) of the first list's, by the device each tensor REPORTS (torch's C++ reads the
    real one, which is the host's for every tensor here: a device tensor and a host one fell into one group keyed
    ``cpu``). As torch's: an empty list stays empty, a None entry is kept, a tensor of a later list must match its
    group's device and dtype except a float step, which may be on the host; the value is (lists, indices)."""
    lists = [list(tensors) for tensors in tensorlistlist]
    first = lists[0]
    if any(len(tensors) not in (0, len(first)) for tensors in lists):
        raise RuntimeError("Expected all tensor lists to have the same length or to be empty")
    groups: dict[Any, Any] = {}
    for index, tensor in enumerate(first):
        if tensor is None:
            raise RuntimeError("Tensors of the first list of nested Tensor lists are supposed to be defined but the "
                               f"{index}-th Tensor is not.")
        key = (tensor.device, tensor.dtype)
        for tensors in lists[1:]:
            other = tensors[index] if tensors else None
            if other is None:
                continue
            same_device = other.device == key[0]
            if not ((same_device and (other.dtype == key[1] or other.dtype in _FLOAT_STEPS))
                    or (not same_device and other.device.type == "cpu" and other.dtype in _FLOAT_STEPS)):
                raise RuntimeError("Tensors of the same index must be on the same device and the same dtype except "
                                   "`step` tensors that can be CPU and float32/64 notwithstanding")
        if key not in groups:
            groups[key] = ([[] for _ in lists], [])
        grouped, indices = groups[key]
        for position, tensors in enumerate(lists):
            if tensors:
                grouped[position].append(tensors[index])
        if with_indices:
            indices.append(index)
    return groups


def can_device_access_peer(device_index: int, peer_index: int) -> bool:
    """``torch._C._cuda_canDeviceAccessPeer``: the one device is not its own peer (H100, torch 2.11, session 27:
    ``torch.cuda.can_device_access_peer(0, 0)`` is False; torch's Python refuses any other index first)."""
    return False


def _false() -> bool:
    return False


def arch_flags() -> str:
    """``torch._C._cuda_getArchFlags()``: the architectures the build targets, as one string."""
    return " ".join(device.get_arch_list())


#: name -> what it is on the emulated device.
BINDINGS: dict[str, Any] = {
    "_cuda_init": device.lazy_init,
    "_cuda_isInBadFork": _false,
    "_cuda_getDeviceCount": device.device_count,
    "_cuda_getDevice": device.current_device,
    "_cuda_setDevice": set_device,
    "_cuda_exchangeDevice": device.exchange_device,
    "_cuda_maybeExchangeDevice": device.maybe_exchange_device,
    "_cuda_getCurrentStream": get_current_stream,
    "_cuda_getDefaultStream": get_default_stream,
    "_cuda_getCurrentRawStream": get_current_raw_stream,
    "_cuda_setStream": set_stream,
    "_cuda_synchronize": streams.synchronize,
    "_cuda_emptyCache": device.empty_cache,
    "_cuda_memoryStats": memory_stats,
    "_cuda_resetPeakMemoryStats": accelerator._reset_peak,
    "_cuda_resetAccumulatedMemoryStats": accelerator._reset_accumulated,
    "_cuda_getArchFlags": arch_flags,
    "_cuda_getCompiledVersion": device.cuda_version_number,  # CUDART_VERSION: 13000 for CUDA 13.0
    "_cuda_canDeviceAccessPeer": can_device_access_peer,
    "_group_tensors_by_device_and_dtype": group_tensors_by_device_and_dtype,
}


def patches() -> list[tuple[Any, str, Any]]:
    """What ``emulate_cuda()`` puts in place (``install.py``)."""
    return [(torch._C, name, value) for name, value in BINDINGS.items()]
