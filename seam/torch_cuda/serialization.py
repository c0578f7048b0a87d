"""``torch.save`` and ``torch.load`` of device tensors under the emulated ``torch.cuda``.

torch records where each saved storage lives through its package registry (``torch.serialization``): a
tagger per backend names the location (``cpu``, ``cuda:0``), and on load a deserializer per backend puts
the storage there. An emulated device storage is a CPU storage to torch, so its own taggers would record
``cpu`` and its CUDA deserializer would ask a CPU-only build for CUDA memory (``Storage device not
recognized: cuda``). The entry below comes first while the emulation is on: it records a device storage
as ``cuda:0``, as a GPU's file does (such a file loads on a GPU as device tensors), and restores a
``cuda`` location as device memory, after torch's own check of the device index (its words for a device
the machine does not have). Every other storage and location falls through to torch's entries.
"""

from __future__ import annotations

import re

import torch
import torch.serialization

from seam.torch_cuda import in_flight, kinds
from seam.torch_cuda.runtime import runtime

#: Before torch's own entries (the CPU tagger is priority 10 and would claim every emulated storage).
PRIORITY = 0
_CUDA_LOCATION = re.compile(r"cuda(:|[0-9]+|$)")


def _untyped(storage: object) -> torch.UntypedStorage:
    return storage if isinstance(storage, torch.UntypedStorage) else storage._untyped_storage  # type: ignore[attr-defined]


def tag(storage: object) -> str | None:
    """``cuda:0`` for emulated device memory (the emulated machine has one device), else torch's taggers decide.
    torch reads the storage's bytes next, with no tensor operation: the replays in flight run first."""
    in_flight.settle(runtime())
    return "cuda:0" if kinds.storage_kind(_untyped(storage)) == "device" else None


def restore(storage: object, location: str) -> object | None:
    """A storage just read, at a ``cuda`` location: the same memory, now device memory."""
    if not _CUDA_LOCATION.match(location):
        return None
    torch.serialization._validate_device(location, "cuda")  # torch's words for cuda:N the machine lacks
    kinds.mark_storage(_untyped(storage), "device")
    return storage


def registry_patch() -> tuple[object, str, list[tuple[int, object, object]]]:
    """The installation's patch: torch's package registry with this entry first."""
    return (torch.serialization, "_package_registry",
            [(PRIORITY, tag, restore), *torch.serialization._package_registry])
