"""The emulated device's identity, memory figures and random state: ``torch.cuda``'s query functions.

One device, ``cuda:0``, named so that nobody mistakes it for hardware. Memory figures are plausible
and consistent (allocated bytes are the live device storages'; ``mem_get_info`` never reports more
free than total); nothing here pretends to time anything.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any

import torch

from seam.torch_cuda import host_cache, memory_history
from seam.torch_cuda.runtime import VISIBLE, runtime

NAME = "seamgate emulated CUDA device (CPU)"
CAPABILITY = (9, 0)
TOTAL_MEMORY = 80 * 2**30
#: What ``torch.version.cuda`` says under emulation (a parseable version, as some libraries parse it), and the
#: CUDA version the emulated driver and NVML report.
EMULATED_CUDA_VERSION = "13.0"


def cuda_version_number() -> int:
    """``EMULATED_CUDA_VERSION`` as the driver and NVML write a CUDA version: 1000 * major + 10 * minor (13000)."""
    major, minor = EMULATED_CUDA_VERSION.split(".")
    return int(major) * 1000 + int(minor) * 10


@dataclass(frozen=True)
class DeviceProperties:
    """What ``torch.cuda.get_device_properties`` returns, for the emulated device."""

    name: str = NAME
    major: int = CAPABILITY[0]
    minor: int = CAPABILITY[1]
    total_memory: int = TOTAL_MEMORY
    multi_processor_count: int = 132  # the H100's (session 27); libraries size their grids by it
    is_integrated: bool = False
    is_multi_gpu_board: bool = False
    max_threads_per_multi_processor: int = 2048
    warp_size: int = 32
    regs_per_multiprocessor: int = 65536
    gcnArchName: str = "NVIDIA emulated"
    #: torch's ``_CUuuid``: 36 characters as a string, 16 bytes in ``.bytes`` (what ``uuid.UUID`` is too)
    uuid: uuid.UUID = uuid.UUID("00000000-0000-0000-0000-00005ea59a7e")
    L2_cache_size: int = 50 * 2**20


def _index(device: Any) -> Any:
    if isinstance(device, str):
        return torch.device(device).index
    return device.index if isinstance(device, torch.device) else device


def check_index(device: Any) -> None:
    """CUDA's refusal of a device that does not exist (the emulated machine has one)."""
    index = _index(device)
    if index not in (None, 0, -1):
        from seam.torch_cuda import cuda_errors

        raise cuda_errors.cuda_error(cuda_errors.INVALID_ORDINAL, f"cuda:{index} asked for; the machine has cuda:0")


def _check_properties_index(device: Any) -> None:
    if _index(device) not in (None, 0, -1):
        raise AssertionError("Invalid device id")


def visible_count() -> int:
    """The devices ``CUDA_VISIBLE_DEVICES`` leaves of the machine's one (0 or 1), read as torch reads it
    (``torch.cuda._parse_visible_devices``): unset, or a list whose first entry is ordinal 0 or a prefix of the
    device's ``GPU-`` UUID, leaves it; an empty list, another ordinal first, a repeated entry or a ``MIG-`` UUID
    leaves none (CUDA stops at the first entry that names no device).

    Only a value the program set while emulating counts: the value the emulation started with (the process's own,
    or the one a job set to hide the machine's GPUs, as a CI job or the gate runner's shell does) picks among the
    machine's GPUs, and the emulated device is not one of them."""
    if os.environ.get(VISIBLE) == runtime().inherited_visible_devices:
        return 1
    visible = torch.cuda._parse_visible_devices()
    if not visible:
        return 0
    first = visible[0]
    if isinstance(first, str):
        return int(first.startswith("GPU-") and f"GPU-{DeviceProperties().uuid}".startswith(first))
    return int(first == 0)


#: Whether this torch's own ``device_count`` asks the driver once CUDA is initialised (torch 2.13) or reads
#: ``CUDA_VISIBLE_DEVICES`` through NVML again until its first count after initialising (torch 2.11: the H100 counted 0
#: devices after the variable was emptied past initialisation, session 35); read off the function's code.
COUNT_ASKS_THE_DRIVER = "is_initializing" in torch.cuda.device_count.__code__.co_consts


def driver_devices() -> int:
    """The devices the driver has: found once, at its first initialising call (``CUDA_VISIBLE_DEVICES`` read then),
    as ``cudaGetDeviceCount`` initialises CUDA's driver and fixes what it sees."""
    rt = runtime()
    if rt.driver_devices is None:
        rt.driver_devices = visible_count()
    return rt.driver_devices


def is_available() -> bool:
    """torch's: the driver's count (which initialises the driver), or with ``PYTORCH_NVML_BASED_CUDA_CHECK=1`` the
    count ``device_count`` gives, which does not."""
    if os.environ.get("PYTORCH_NVML_BASED_CUDA_CHECK") == "1":
        return device_count() > 0
    return driver_devices() > 0


def device_count() -> int:
    """As torch counts: before CUDA is initialised, ``CUDA_VISIBLE_DEVICES`` read again at each call (torch reads it
    through NVML then, caching nothing, for this); from then on the first count after initialising, kept: the driver's
    (torch 2.13) or the variable read once more (torch 2.11; ``COUNT_ASKS_THE_DRIVER``)."""
    rt = runtime()
    if rt.counted is not None:
        return rt.counted
    count = driver_devices() if rt.initialized and COUNT_ASKS_THE_DRIVER else visible_count()
    if rt.initialized:
        rt.counted = count
    return count


def current_device() -> int:
    lazy_init()
    return 0


def set_device(device: Any) -> None:
    check_index(device)
    lazy_init()


def exchange_device(index: int) -> int:
    """``torch.cuda._exchange_device`` (``torch.cuda.device``'s entry; a CUDA build's C++): the device before, after
    CUDA's check of ``index``; a negative index changes nothing."""
    if index < 0:
        return -1
    set_device(index)
    return 0


def maybe_exchange_device(index: int) -> int:
    """``torch.cuda._maybe_exchange_device`` (``torch.cuda.device``'s exit): as ``exchange_device``, never
    initialising the device."""
    return -1 if index < 0 else 0


def get_device_name(device: Any = None) -> str:
    check_index(device)
    lazy_init()
    return NAME


def get_device_capability(device: Any = None) -> tuple[int, int]:
    check_index(device)
    lazy_init()
    return CAPABILITY


def get_device_properties(device: Any = None) -> DeviceProperties:
    _check_properties_index(device)
    lazy_init()
    return DeviceProperties()


def get_arch_list() -> list[str]:
    return ["sm_90"]


def is_initialized() -> bool:
    """``torch.cuda.is_initialized``: False on a fresh device until something initialises CUDA (``lazy_init``)."""
    return runtime().initialized


def lazy_init() -> None:
    """``torch.cuda._lazy_init``: the device is initialised from now on. As on the H200 (torch 2.11, device probe
    of session 14): a query of the current or default stream, ``synchronize``, ``mem_get_info``, the device's
    properties, name or capability, ``current_device``/``set_device``, ``get_rng_state``, ``initial_seed``,
    ``reset_peak_memory_stats`` and a device tensor initialise; making a ``Stream``, ``Event`` or ``CUDAGraph``,
    ``graph_pool_handle``, ``manual_seed``, the memory figures and ``empty_cache`` do not, and until then
    ``memory_stats()`` is empty. Where ``CUDA_VISIBLE_DEVICES`` leaves no device, initialising is refused in torch's
    words, and nothing is initialised."""
    rt = runtime()
    if not rt.initialized:
        if not driver_devices():
            raise RuntimeError("No CUDA GPUs are available")
        rt.initialized = True


class device:
    """``torch.cuda.device(idx)``: a context that selects the (one) device."""

    def __init__(self, device: Any) -> None:
        check_index(device)
        self.idx = 0

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


# -- memory ---------------------------------------------------------------------------------------
# The caching allocator's figures, from its model (``seam/torch_cuda/allocator.py``).
def _stats() -> dict[str, int]:
    return runtime().allocator.read().stats.flat()


def memory_allocated(device: Any = None) -> int:
    return _stats()["allocated_bytes.all.current"]


def max_memory_allocated(device: Any = None) -> int:
    return _stats()["allocated_bytes.all.peak"]


def memory_reserved(device: Any = None) -> int:
    return _stats()["reserved_bytes.all.current"]


def max_memory_reserved(device: Any = None) -> int:
    return _stats()["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device: Any = None) -> None:
    lazy_init()
    runtime().allocator.read().stats.reset_peak()


def reset_max_memory_allocated(device: Any = None) -> None:
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device: Any = None) -> None:
    runtime().allocator.read().stats.reset_accumulated()


def empty_cache() -> None:
    """Release every wholly free segment CUDA's ``release_cached_blocks`` releases: none of the default pools while
    a pool is recorded to (a capture: H200 ``empty_cache_in_capture``; ``use_mem_pool``; a refused capture end's
    entry), those of private pools no graph uses any more always. Releasing one inside a capture is a ``cudaFree``,
    which a global or thread-local capture refuses, invalidated (H100, session 29); a relaxed one allows it."""
    rt = runtime()
    allocator = rt.allocator.read()
    if rt.captures and allocator.frees_a_private_segment():
        rt.refuse_unsafe(rt.refusing_captures(), "empty_cache's cudaFree of a private pool no graph uses, in a capture")
    allocator.release_cached()  # the log is read above: ``CachingAllocator.empty_cache`` would read it again


def empty_host_cache() -> None:
    """``torch._C._host_emptyCache`` (``torch.accelerator.empty_host_cache``): the pinned cache's free blocks go."""
    host_cache.empty_cache()


def host_memory_available() -> int | None:
    """The host's available memory in bytes (``MemAvailable`` of ``/proc/meminfo``); None where it cannot be read.

    The emulated device's memory is the host's: an allocation the device could hold but the host cannot (PyTorch's
    ``test_set_per_process_memory_fraction`` asks 18.6 GiB) is handed out by an overcommitting host and, once written,
    grows the process until the kernel's OOM killer ends it and the whole pytest run with it (session 34: 24 GB
    resident on a 23 GB machine). ``dispatch._past_the_device`` asks this before a device allocation of 1 GiB or more
    and refuses it as CUDA's out of memory. Memory a CPU kernel takes for itself (the 16 GiB of ``.sum()`` over 2 GiB of
    int8 in ``test_randint_generation_for_large_numel``) is no dispatched allocation and is not seen."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def mem_get_info(device: Any = None) -> tuple[int, int]:
    lazy_init()
    return max(0, TOTAL_MEMORY - memory_reserved()), TOTAL_MEMORY


def memory_stats(device: Any = None) -> dict[str, int]:
    """Empty before the device is initialised, as torch's (``memory_stats_as_nested_dict``)."""
    return _stats() if runtime().initialized else {}


def memory_snapshot(mempool_id: Any = None, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """``torch.cuda.memory_snapshot``: the segments of ``torch.cuda.memory._snapshot()`` (a recorded history
    notes the call, as torch's does)."""
    return memory_history.memory_snapshot(mempool_id)["segments"]


def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
    """``torch.cuda.memory_stats_as_nested_dict``: ``memory_stats`` by its dotted keys, as torch nests its own (torch's
    ``memory_stats`` is this dictionary flattened)."""
    nested: dict[str, Any] = {}
    for key, value in memory_stats(device).items():
        *path, last = key.split(".")
        node = nested
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    return nested


def get_allocator_backend() -> str:
    """``torch.cuda.get_allocator_backend``: the caching allocator the emulator models, torch's native one."""
    return "native"


def ipc_collect() -> None:
    """``torch.cuda.ipc_collect``: no memory is shared with another process on the emulated device."""


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    stats = _stats()
    return (f"seamgate emulated CUDA device: {stats['allocated_bytes.all.current']} bytes allocated, "
            f"{stats['allocated_bytes.all.peak']} peak, {stats['reserved_bytes.all.current']} reserved")


# -- random ---------------------------------------------------------------------------------------
def manual_seed(seed: int) -> None:
    rt = runtime()
    if rt.captures and int(seed) != rt.rng.seed:
        from seam.torch_cuda import cuda_errors

        raise cuda_errors.torch_error(cuda_errors.SEED_IN_CAPTURE, "a new seed while a capture is open")
    rt.rng.manual_seed(int(seed))


def seed() -> None:
    import random

    manual_seed(random.getrandbits(63))


def initial_seed() -> int:
    lazy_init()
    return runtime().rng.seed


def get_rng_state(device: Any = "cuda") -> torch.Tensor:
    lazy_init()
    return runtime().rng.get_state()


def get_rng_state_all() -> list[torch.Tensor]:
    return [get_rng_state()]


def set_rng_state(new_state: torch.Tensor, device: Any = "cuda") -> None:
    runtime().rng.set_state(new_state)


def set_rng_state_all(new_states: Any) -> None:
    for state in new_states:
        set_rng_state(state)
