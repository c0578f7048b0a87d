"""The refusals real CUDA makes inside a stream capture, as a torch dispatch mode.

Both capture-capable backends push a ``CaptureGuard`` while a capture is open, so a host sync or a
pageable host-to-device copy inside capture raises the SAME seam error on the CPU emulator and on
CUDA (where, unguarded, it would invalidate the capture with a less specific CUDA error).
"""

from __future__ import annotations

from typing import Any, Callable, Literal

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from seam.errors import CaptureSyncError, PageableCopyError

MemoryKind = Literal["device", "pinned", "pageable"]
aten = torch.ops.aten


def _overloads(*names: str) -> frozenset[Any]:
    found = []
    for name in names:
        packet, _, overload = name.partition(".")
        op = getattr(aten, packet, None)
        if op is not None and hasattr(op, overload or "default"):
            found.append(getattr(op, overload or "default"))
    return frozenset(found)


#: Operations that read a device value back to the host (a synchronization) or whose output shape
#: depends on device data (which needs one). Real CUDA invalidates the capture on each.
SYNC_OPS = _overloads(
    "_local_scalar_dense",
    "item",
    "is_nonzero",
    "equal",
    "nonzero",
    "masked_select",
    "_unique2",
    "unique_dim",
    "unique_consecutive",
    "repeat_interleave.Tensor",
)

COPY_OPS = _overloads("copy_")


class CaptureGuard(TorchDispatchMode):
    """Raises the seam's capture errors for work that real CUDA refuses inside capture."""

    def __init__(self, kind_of: Callable[[torch.Tensor], MemoryKind], active: Callable[[], bool]) -> None:
        super().__init__()
        self._kind_of = kind_of
        self._active = active

    def check(self, func: Any, args: tuple[Any, ...]) -> None:
        """Raise if ``func(*args)`` is refused inside capture."""
        if func in SYNC_OPS:
            raise CaptureSyncError(
                f"{func} inside graph capture reads a device value on the host; "
                "move it out of the captured region or keep the value on the device"
            )
        if func in COPY_OPS:
            check_copy(self._kind_of(args[0]), self._kind_of(args[1]))

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        if self._active():
            self.check(func, args)
        return func(*args, **(kwargs or {}))


def check_copy(dst: MemoryKind, src: MemoryKind) -> None:
    """Refuse a copy that real CUDA refuses inside capture."""
    if dst == "device" and src == "pageable":
        raise PageableCopyError(
            "copy from pageable host memory to the device inside graph capture; "
            "stage it through a pinned buffer (backend.alloc_pinned / PersistentStepInput)"
        )
    if src == "device" and dst == "pageable":
        raise CaptureSyncError("device-to-pageable-host copy inside graph capture is a host sync")
