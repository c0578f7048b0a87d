"""``torch.Stream`` and ``torch.Event`` under the emulated ``torch.cuda``: torch's device-generic classes.

Newer engines and ``torch.accelerator`` code make streams and events with the generic classes,
``torch.Stream(device="cuda")``; on a CPU-only build torch's own refuse any CUDA device. Inside the
emulation the names are stand-ins in the manner of ``ordinals.device``: a call for the CUDA device (a
bare call too: CUDA is then the current accelerator, as on a CUDA build) makes the emulated
``torch.cuda`` stream or event, any other device torch's own; and ``isinstance`` holds for both, so a
``torch.cuda`` stream or event is a ``torch.Stream`` or ``torch.Event``, as on a CUDA build, where the
``torch.cuda`` classes derive from the generic ones.
"""

from __future__ import annotations

from typing import Any

import torch

from seam.torch_cuda import streams
from seam.torch_cuda.ordinals import TORCH_DEVICE, as_cuda

#: torch's own classes, taken before any emulation replaces the names.
TORCH_STREAM, TORCH_EVENT = torch.Stream, torch.Event


def _on_device(device: Any) -> bool:
    """Whether ``device`` (``None``: the current accelerator, the emulated CUDA device) names CUDA."""
    return device is None or TORCH_DEVICE(as_cuda(device)).type == "cuda"


class _GenericMeta(type):
    """Calls make the device's stream or event; ``isinstance``/``issubclass`` answer for torch's and the emulator's."""

    torch_class: type
    emulated: type

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, (cls.torch_class, cls.emulated))

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return isinstance(subclass, type) and issubclass(subclass, (cls.torch_class, cls.emulated))


class _StreamMeta(_GenericMeta):
    torch_class, emulated = TORCH_STREAM, streams.Stream

    def __call__(cls, device: Any = None, *, priority: int = 0, **kwargs: Any) -> Any:
        if _on_device(device):
            return streams.Stream(priority=priority)
        return TORCH_STREAM(device=device, priority=priority, **kwargs)


class _EventMeta(_GenericMeta):
    torch_class, emulated = TORCH_EVENT, streams.Event

    def __call__(cls, device: Any = None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> Any:
        if _on_device(device):
            return streams.Event(enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)
        return TORCH_EVENT(device=device, enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)


class Stream(metaclass=_StreamMeta):
    """``torch.Stream`` under emulation."""


class Event(metaclass=_EventMeta):
    """``torch.Event`` under emulation."""


for _stand_in, _own in ((Stream, TORCH_STREAM), (Event, TORCH_EVENT)):
    _stand_in.__module__, _stand_in.__qualname__, _stand_in.__doc__ = "torch", _own.__name__, _own.__doc__

#: (owner, name, replacement) for the installation.
GENERIC_PATCHES: list[tuple[Any, str, Any]] = [(torch, "Stream", Stream), (torch, "Event", Event)]
