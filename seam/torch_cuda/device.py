"""The emulated device's identity, memory figures and random state: ``torch.cuda``'s query functions.

One device, ``cuda:0``, named so that nobody mistakes it for hardware. Memory figures are plausible
and consistent (allocated bytes are the live device storages'; ``mem_get_info`` never reports more
free than total); nothing here pretends to time anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from seam.torch_cuda.kinds import ACCOUNT
from seam.torch_cuda.runtime import runtime

NAME = "seamgate emulated CUDA device (CPU)"
CAPABILITY = (9, 0)
TOTAL_MEMORY = 80 * 2**30


@dataclass(frozen=True)
class DeviceProperties:
    """What ``torch.cuda.get_device_properties`` returns, for the emulated device."""

    name: str = NAME
    major: int = CAPABILITY[0]
    minor: int = CAPABILITY[1]
    total_memory: int = TOTAL_MEMORY
    multi_processor_count: int = 1
    is_integrated: bool = False
    is_multi_gpu_board: bool = False
    max_threads_per_multi_processor: int = 2048
    warp_size: int = 32
    regs_per_multiprocessor: int = 65536
    gcnArchName: str = "NVIDIA emulated"
    uuid: str = "00000000-0000-0000-0000-00005ea59a7e"
    L2_cache_size: int = 50 * 2**20


def _check_index(device: Any) -> None:
    index = device.index if isinstance(device, torch.device) else device
    if isinstance(device, str):
        index = torch.device(device).index
    if index not in (None, 0, -1):
        raise RuntimeError(f"CUDA error: invalid device ordinal (the emulated machine has one device; asked for {index})")


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> int:
    return 0


def set_device(device: Any) -> None:
    _check_index(device)


def get_device_name(device: Any = None) -> str:
    _check_index(device)
    return NAME


def get_device_capability(device: Any = None) -> tuple[int, int]:
    _check_index(device)
    return CAPABILITY


def get_device_properties(device: Any = None) -> DeviceProperties:
    _check_index(device)
    return DeviceProperties()


def get_arch_list() -> list[str]:
    return ["sm_90"]


def is_initialized() -> bool:
    return True


def lazy_init() -> None:
    """``torch.cuda._lazy_init``: nothing to start (torch's C++ factories call it before a cuda op)."""


class device:
    """``torch.cuda.device(idx)``: a context that selects the (one) device."""

    def __init__(self, device: Any) -> None:
        _check_index(device)
        self.idx = 0

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


# -- memory ---------------------------------------------------------------------------------------
def memory_allocated(device: Any = None) -> int:
    return ACCOUNT.allocated


def max_memory_allocated(device: Any = None) -> int:
    return ACCOUNT.peak


def memory_reserved(device: Any = None) -> int:
    return ACCOUNT.peak


def max_memory_reserved(device: Any = None) -> int:
    return ACCOUNT.peak


def reset_peak_memory_stats(device: Any = None) -> None:
    ACCOUNT.reset_peak()


def reset_max_memory_allocated(device: Any = None) -> None:
    ACCOUNT.reset_peak()


def empty_cache() -> None:
    """Nothing is cached (CUDA allows it inside a capture too: H200 ``empty_cache_in_capture``)."""


def mem_get_info(device: Any = None) -> tuple[int, int]:
    return max(0, TOTAL_MEMORY - ACCOUNT.allocated), TOTAL_MEMORY


def memory_stats(device: Any = None) -> dict[str, int]:
    return {"allocated_bytes.all.current": ACCOUNT.allocated, "allocated_bytes.all.peak": ACCOUNT.peak,
            "reserved_bytes.all.current": ACCOUNT.peak, "num_alloc_retries": 0, "num_ooms": 0,
            "allocation.all.allocated": ACCOUNT.allocations}


# -- random ---------------------------------------------------------------------------------------
def manual_seed(seed: int) -> None:
    runtime().generator.manual_seed(int(seed))


def seed() -> None:
    runtime().generator.seed()


def initial_seed() -> int:
    return runtime().generator.initial_seed()


def get_rng_state(device: Any = "cuda") -> torch.Tensor:
    return runtime().generator.get_state()


def get_rng_state_all() -> list[torch.Tensor]:
    return [get_rng_state()]


def set_rng_state(new_state: torch.Tensor, device: Any = "cuda") -> None:
    runtime().generator.set_state(new_state.clone())


def set_rng_state_all(new_states: Any) -> None:
    for state in new_states:
        set_rng_state(state)


