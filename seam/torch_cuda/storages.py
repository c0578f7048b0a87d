"""Storages of device memory under the emulated ``torch.cuda``: they say they are on the device, and can be made there.

A device tensor's storage is a CPU storage marked ``device`` (``kinds.py``); torch's ``UntypedStorage.device`` read
the CPU under it, so ``x.untyped_storage().device`` said ``cpu``, ``is_cuda`` False, and ``storage.cpu()`` handed the
device memory itself back where a GPU copies it to the host. And ``torch.UntypedStorage(n, device="cuda")`` (what
``Tensor.type(torch.cuda.FloatTensor)``'s storage conversion, ``storage.cuda()`` and a storage's deep copy call) was
refused by a CPU-only build: "Storage device not recognized: cuda" (PyTorch's ``test_type_conversions`` and
``test_serialization_array_with_storage`` passed on the H100 at dfdac4d and failed emulated).

Inside the emulation ``UntypedStorage.device`` says ``cuda:0`` for device memory (``is_cuda``, ``cpu()``, ``cuda()``,
``to()`` and ``TypedStorage.device`` follow it), and a storage asked for on the device is device memory from the
caching allocator model, as a device tensor's is (a size, or a sequence of byte values copied to it); a device
other than ``cuda:0`` is CUDA's invalid ordinal.
"""

from __future__ import annotations

from typing import Any

import torch

from seam.torch_cuda import kinds
from seam.torch_cuda.device import check_index
from seam.torch_cuda.ordinals import TORCH_DEVICE
from seam.torch_cuda.runtime import DEVICE

_base_device = torch._C.StorageBase.device
_base_new = torch._C.StorageBase.__new__
_modes_on = torch._C._len_torch_dispatch_stack


def device(self: torch.UntypedStorage) -> torch.device:
    """``UntypedStorage.device``: ``cuda:0`` for emulated device memory, where a program asks (the device mode on
    the stack). The emulator's own work, which runs inside the device mode's dispatch with the stack empty, sees the
    CPU storage it works on: a capture's saved bytes (``storage.clone()``) are host memory, as ``kinds.py`` wants."""
    if _modes_on() and kinds.storage_kind(self) == "device":
        return DEVICE
    return _base_device.__get__(self)


def _cuda_index(where: Any) -> int | None:
    """The CUDA device index ``where`` names (0 for a bare ``cuda``), else None (another device, or none)."""
    if where is None or isinstance(where, int):
        return None
    named = TORCH_DEVICE(where) if isinstance(where, str) else where
    if isinstance(named, torch.device) and named.type == "cuda":
        return 0 if named.index is None else named.index
    return None


def new(cls: type, *args: Any, device: Any = None, **kwargs: Any) -> torch.UntypedStorage:
    """``torch.UntypedStorage(...)``: on the emulated device, device memory; anywhere else torch's own."""
    index = _cuda_index(device) if _modes_on() else None
    if index is None:
        return _base_new(cls, *args, **kwargs) if device is None else _base_new(cls, *args, device=device, **kwargs)
    check_index(index)  # CUDA's refusal of a device the machine lacks
    host = _base_new(cls, *args, **kwargs)  # the size or the byte values, read as torch reads them
    made = torch.empty(host.nbytes(), dtype=torch.uint8, device=DEVICE).untyped_storage()
    if args and not isinstance(args[0], int) and host.nbytes():
        made.copy_(host)
    return made


def patches() -> list[tuple[Any, str, Any]]:
    """What ``emulate_cuda()`` puts in place (``install.py``)."""
    return [(torch.UntypedStorage, "device", property(device)),
            (torch.UntypedStorage, "__new__", staticmethod(new))]
