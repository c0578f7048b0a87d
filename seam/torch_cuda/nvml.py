"""NVML (``libnvidia-ml.so.1``) of the emulated device: what pynvml, torch and engines ask it, answered from the device.

Identity and memory are the emulated device's own (``device.py``): one device (NVML counts every device, whatever
``CUDA_VISIBLE_DEVICES`` says), its name, ``GPU-`` and its UUID, compute capability 9.0, 80 GiB of which the caching
allocator's reserved bytes are used, and this process among the device's compute processes once torch has
initialised CUDA. Sensors are readings of an idle H100 SXM, constant: 35 C, 70 W, clocks of 1980 MHz (graphics and
SM) and 2619 MHz (memory), no utilisation (the emulated device runs no kernels). The library counts ``nvmlInit``
against ``nvmlShutdown`` for the process, as NVML does, and refuses a device query while it is not initialised.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from seam.torch_cuda import device
from seam.torch_cuda.shared_libraries import (Library, address_of, set_address, target, value_of,
                                              write_string)

SUCCESS, UNINITIALIZED, INVALID_ARGUMENT, NOT_SUPPORTED, NOT_FOUND, INSUFFICIENT_SIZE, LIBRARY_NOT_FOUND = (
    0, 1, 2, 3, 6, 7, 12)
_WORDS = {SUCCESS: "Success", UNINITIALIZED: "Uninitialized", INVALID_ARGUMENT: "Invalid Argument",
          NOT_SUPPORTED: "Not Supported", NOT_FOUND: "Not Found", INSUFFICIENT_SIZE: "Insufficient Size",
          LIBRARY_NOT_FOUND: "NVML Shared Library Not Found"}
DRIVER_VERSION = "580.82.07"
TEMPERATURE_C = 35
POWER_MW = 70_000
CLOCKS_MHZ = {0: 1980, 1: 1980, 2: 2619, 3: 1755}  # graphics, SM, memory, video
#: Not available, as NVML writes it for a MIG id on a device without MIG.
_NONE = 0xFFFFFFFF
#: The device's handle: the address of memory of ours, so that a binding that reads through it reads something.
_HANDLE_MEMORY = ctypes.create_string_buffer(64)
HANDLE = ctypes.addressof(_HANDLE_MEMORY)


class _State:
    initialised = 0  # nvmlInit calls not yet shut down


def uuid() -> str:
    return f"GPU-{device.DeviceProperties().uuid}"


def _init(flags: Any = 0) -> int:
    _State.initialised += 1
    return SUCCESS


def _shutdown() -> int:
    if not _State.initialised:
        return UNINITIALIZED
    _State.initialised -= 1
    return SUCCESS


def _error_string(code: Any) -> bytes:
    return _WORDS.get(value_of(code), "Unknown Error").encode()


def _ready(handle: Any = HANDLE) -> int:
    """SUCCESS, or why a device query is refused: the library not initialised, or not the device's handle."""
    if not _State.initialised:
        return UNINITIALIZED
    return SUCCESS if address_of(handle) == HANDLE else INVALID_ARGUMENT


def _written(handle: Any, out: Any, value: Any) -> int:
    refused = _ready(handle)
    if refused:
        return refused
    target(out).value = value
    return SUCCESS


def _text(buffer: Any, length: Any, text: str, handle: Any = HANDLE) -> int:
    refused = _ready(handle)
    if refused:
        return refused
    return SUCCESS if write_string(buffer, length, text) else INSUFFICIENT_SIZE


def _count(out: Any) -> int:
    return _written(HANDLE, out, 1)


def _handle_by_index(index: Any, out: Any) -> int:
    refused = _ready()
    if refused:
        return refused
    if value_of(index) != 0:
        return INVALID_ARGUMENT
    set_address(out, HANDLE)
    return SUCCESS


def _handle_by_uuid(text: Any, out: Any) -> int:
    refused = _ready()
    if refused:
        return refused
    asked = getattr(text, "value", text)
    if isinstance(asked, bytes):
        asked = asked.decode(errors="replace")
    if asked != uuid():
        return NOT_FOUND
    set_address(out, HANDLE)
    return SUCCESS


def _memory(handle: Any, out: Any) -> int:
    refused = _ready(handle)
    if refused:
        return refused
    info = target(out)
    used = device.memory_reserved()
    info.total, info.free, info.used = device.TOTAL_MEMORY, device.TOTAL_MEMORY - used, used
    if hasattr(info, "reserved"):
        info.reserved = 0
    return SUCCESS


def _capability(handle: Any, major: Any, minor: Any) -> int:
    refused = _ready(handle)
    if refused:
        return refused
    target(major).value, target(minor).value = device.CAPABILITY
    return SUCCESS


def _temperature(handle: Any, sensor: Any, out: Any) -> int:
    return _written(handle, out, TEMPERATURE_C) if value_of(sensor) == 0 else INVALID_ARGUMENT


def _clock(handle: Any, kind: Any, out: Any) -> int:
    mhz = CLOCKS_MHZ.get(value_of(kind))
    return INVALID_ARGUMENT if mhz is None else _written(handle, out, mhz)


def _utilization(handle: Any, out: Any) -> int:
    refused = _ready(handle)
    if refused:
        return refused
    rates = target(out)
    rates.gpu, rates.memory = 0, 0
    return SUCCESS


def _processes(handle: Any, count: Any, array: Any) -> int:
    """This process, once torch has initialised CUDA (its memory: the caching allocator's reserved bytes)."""
    refused = _ready(handle)
    if refused:
        return refused
    listed = [(os.getpid(), device.memory_reserved())] if device.is_initialized() else []
    room, slots = target(count), target(array) if array is not None else None
    asked = room.value
    room.value = len(listed)
    if len(listed) > asked or (listed and slots is None):
        return INSUFFICIENT_SIZE
    for i, (pid, used) in enumerate(listed):
        slots[i].pid, slots[i].usedGpuMemory = pid, used
        for field in ("gpuInstanceId", "computeInstanceId"):
            if hasattr(slots[i], field):
                setattr(slots[i], field, _NONE)
    return SUCCESS


def _index(handle: Any, out: Any) -> int:
    return _written(handle, out, 0)


FUNCTIONS = {
    "nvmlInit": _init, "nvmlInit_v2": _init, "nvmlInitWithFlags": _init, "nvmlShutdown": _shutdown,
    "nvmlErrorString": _error_string,
    "nvmlSystemGetDriverVersion": lambda buf, length: _text(buf, length, DRIVER_VERSION),
    "nvmlSystemGetNVMLVersion": lambda buf, length: _text(buf, length, f"{device.cuda_version_number() // 1000}."
                                                                       f"{DRIVER_VERSION}"),
    "nvmlSystemGetCudaDriverVersion": lambda out: _written(HANDLE, out, device.cuda_version_number()),
    "nvmlSystemGetCudaDriverVersion_v2": lambda out: _written(HANDLE, out, device.cuda_version_number()),
    "nvmlDeviceGetCount": _count, "nvmlDeviceGetCount_v2": _count,
    "nvmlDeviceGetHandleByIndex": _handle_by_index, "nvmlDeviceGetHandleByIndex_v2": _handle_by_index,
    "nvmlDeviceGetHandleByUUID": _handle_by_uuid,
    "nvmlDeviceGetName": lambda handle, buf, length: _text(buf, length, device.NAME, handle),
    "nvmlDeviceGetUUID": lambda handle, buf, length: _text(buf, length, uuid(), handle),
    "nvmlDeviceGetIndex": _index, "nvmlDeviceGetMinorNumber": _index,
    "nvmlDeviceGetMemoryInfo": _memory, "nvmlDeviceGetMemoryInfo_v2": _memory,
    "nvmlDeviceGetCudaComputeCapability": _capability,
    "nvmlDeviceGetTemperature": _temperature,
    "nvmlDeviceGetPowerUsage": lambda handle, out: _written(handle, out, POWER_MW),
    "nvmlDeviceGetClockInfo": _clock, "nvmlDeviceGetMaxClockInfo": _clock,
    "nvmlDeviceGetUtilizationRates": _utilization,
    "nvmlDeviceGetComputeRunningProcesses": _processes, "nvmlDeviceGetComputeRunningProcesses_v2": _processes,
    "nvmlDeviceGetComputeRunningProcesses_v3": _processes,
}

LIBRARY = Library("nvml", FUNCTIONS, not_supported=NOT_SUPPORTED, not_found=LIBRARY_NOT_FOUND)
