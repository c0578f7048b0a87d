"""The CUDA driver (``libcuda.so.1``) of the emulated device, as far as code asks it through ``ctypes``.

The driver is initialised by its first initialising call (``device.driver_devices``: ``torch.cuda.is_available``,
torch's lazy init, a ``cuInit`` of the caller's own); before that a device query answers
``CUDA_ERROR_NOT_INITIALIZED`` (3), which is how PyTorch's ``test_lazy_init`` checks that importing torch initialised
nothing. Devices are those ``CUDA_VISIBLE_DEVICES`` left then, read once; ``cuInit`` with none answers
``CUDA_ERROR_NO_DEVICE``. Answered: the driver's version, the device count, a device by
ordinal, its name, memory, compute capability and the attributes torch's device properties carry; the words of an
error. Anything else answers ``CUDA_ERROR_NOT_SUPPORTED``.
"""

from __future__ import annotations

from typing import Any

from seam.torch_cuda import device
from seam.torch_cuda.runtime import runtime
from seam.torch_cuda.shared_libraries import Library, target, value_of, write_string

SUCCESS, INVALID_VALUE, NOT_INITIALIZED, NO_DEVICE, INVALID_DEVICE, NOT_SUPPORTED = 0, 1, 3, 100, 101, 801
_WORDS = {SUCCESS: ("CUDA_SUCCESS", "no error"), INVALID_VALUE: ("CUDA_ERROR_INVALID_VALUE", "invalid argument"),
          NOT_INITIALIZED: ("CUDA_ERROR_NOT_INITIALIZED", "initialization error"),
          NO_DEVICE: ("CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"),
          INVALID_DEVICE: ("CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"),
          NOT_SUPPORTED: ("CUDA_ERROR_NOT_SUPPORTED", "operation not supported")}
#: ``CUdevice_attribute`` values torch's device properties carry.
_ATTRIBUTES = {
    10: lambda p: p.warp_size, 16: lambda p: p.multi_processor_count, 18: lambda p: int(p.is_integrated),
    38: lambda p: p.L2_cache_size, 39: lambda p: p.max_threads_per_multi_processor,
    75: lambda p: p.major, 76: lambda p: p.minor, 82: lambda p: p.regs_per_multiprocessor,
    84: lambda p: int(p.is_multi_gpu_board),
}


def _ready() -> int:
    devices = runtime().driver_devices
    if devices is None:
        return NOT_INITIALIZED
    return SUCCESS if devices else NO_DEVICE


def _on_device(ordinal: Any) -> int:
    refused = _ready()
    if refused:
        return refused
    return SUCCESS if value_of(ordinal) == 0 else INVALID_DEVICE


def _cu_init(flags: Any) -> int:
    if value_of(flags) != 0:
        return INVALID_VALUE
    return SUCCESS if device.driver_devices() else NO_DEVICE


def _driver_version(out: Any) -> int:
    target(out).value = device.cuda_version_number()
    return SUCCESS


def _count(out: Any) -> int:
    refused = _ready()
    if refused == NOT_INITIALIZED:
        return refused
    target(out).value = runtime().driver_devices  # read once, as the driver initialised
    return SUCCESS


def _get(out: Any, ordinal: Any) -> int:
    refused = _on_device(ordinal)
    if not refused:
        target(out).value = 0
    return refused


def _name(buffer: Any, length: Any, ordinal: Any) -> int:
    refused = _on_device(ordinal)
    if refused:
        return refused
    return SUCCESS if write_string(buffer, length, device.NAME) else INVALID_VALUE


def _total_memory(out: Any, ordinal: Any) -> int:
    refused = _on_device(ordinal)
    if not refused:
        target(out).value = device.TOTAL_MEMORY
    return refused


def _capability(major: Any, minor: Any, ordinal: Any) -> int:
    refused = _on_device(ordinal)
    if not refused:
        target(major).value, target(minor).value = device.CAPABILITY
    return refused


def _attribute(out: Any, attribute: Any, ordinal: Any) -> int:
    refused = _on_device(ordinal)
    if refused:
        return refused
    read = _ATTRIBUTES.get(value_of(attribute))
    if read is None:
        return NOT_SUPPORTED
    target(out).value = read(device.DeviceProperties())
    return SUCCESS


def _words(which: int) -> Any:
    def answer(code: Any, out: Any) -> int:
        words = _WORDS.get(value_of(code))
        if words is None:
            return INVALID_VALUE
        target(out).value = words[which].encode()  # kept alive by the pointer the caller passed
        return SUCCESS
    return answer


FUNCTIONS = {
    "cuInit": _cu_init, "cuDriverGetVersion": _driver_version, "cuDeviceGetCount": _count, "cuDeviceGet": _get,
    "cuDeviceGetName": _name, "cuDeviceTotalMem": _total_memory, "cuDeviceTotalMem_v2": _total_memory,
    "cuDeviceComputeCapability": _capability, "cuDeviceGetAttribute": _attribute,
    "cuGetErrorName": _words(0), "cuGetErrorString": _words(1),
}

LIBRARY = Library("cuda", FUNCTIONS, not_supported=NOT_SUPPORTED, not_found=NO_DEVICE)
