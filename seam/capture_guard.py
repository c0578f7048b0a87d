"""The refusals real CUDA makes inside a stream capture, as a torch dispatch mode.

Both capture-capable backends push a ``CaptureGuard`` while a capture is open, so a host sync or a
pageable host-to-device copy inside capture raises the SAME seam error on the CPU emulator and on
CUDA (where, unguarded, it would invalidate the capture with a less specific CUDA error).
"""

from __future__ import annotations

from typing import Any, Callable, Literal

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from seam import collector
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
    """Raises the seam's capture errors for work that real CUDA refuses inside capture.

    Two scopes, as CUDA has them (H200, ``tests/fidelity/raw_cuda.py``): a host read of DEVICE memory
    is refused on ANY queue while a capture is open (the global capture mode); a pageable copy is
    refused only on a capturing queue (elsewhere CUDA runs it eagerly).
    """

    def __init__(self, kind_of: Callable[[torch.Tensor], MemoryKind], capturing_here: Callable[[], bool]) -> None:
        super().__init__()
        self._kind_of = kind_of
        self._capturing_here = capturing_here

    def _reads_device(self, args: tuple[Any, ...]) -> bool:
        return any(isinstance(t, torch.Tensor) and self._kind_of(t) == "device" for t in tree_leaves(args))

    def check_global(self, func: Any, args: tuple[Any, ...]) -> None:
        """Raise if ``func(*args)`` is refused while any capture is open, on whatever queue it runs."""
        if func in SYNC_OPS and self._reads_device(args):
            collector.note_unsafe_call(f"{func} (a host read of device memory)")
            raise CaptureSyncError(
                f"{func} while a graph capture is open reads a device value on the host; "
                "move it out of the captured region or keep the value on the device"
            )

    def check(self, func: Any, args: tuple[Any, ...]) -> None:
        """Raise if ``func(*args)`` is refused on a capturing queue."""
        self.check_global(func, args)
        if func in COPY_OPS:
            check_copy(self._kind_of(args[0]), self._kind_of(args[1]))

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        if self._capturing_here():
            self.check(func, args)
        elif collector.any_capture_open():
            self.check_global(func, args)
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
