"""``torch.Stream`` and ``torch.Event`` under the emulated ``torch.cuda``: torch's device-generic classes.

Newer engines and ``torch.accelerator`` code make streams and events with the generic classes,
``torch.Stream(device="cuda")``; on a CPU-only build torch's own refuse any CUDA device. Inside the emulation the
names are stand-ins in the manner of ``ordinals.device``: a call for the CUDA device (a bare call too: CUDA is then
the current accelerator, as on a CUDA build) makes a generic stream or event of the emulated device, any other
device torch's own. As on the H100 (torch 2.11, ``scripts/generic_stream_probe.py``,
``evidence/h100-generic-stream-probe-5c7867f.jsonl``):

- a generic object is its own class, not ``torch.cuda``'s: ``type(torch.Stream(device="cuda"))`` is ``torch.Stream``,
  and ``torch.accelerator.current_stream()`` and ``Stream.record_event()`` give generic objects; a ``torch.cuda``
  stream or event is still a ``torch.Stream`` or ``torch.Event`` (there the ``torch.cuda`` classes derive from them:
  ``isinstance``, ``issubclass`` and the ``torch.cuda`` classes' ``mro()`` say so, ``streams._DerivedFromGeneric``);
- it names the same native stream or event as a ``torch.cuda`` one (``stream_id``, ``native_handle``), works wherever
  one does (``torch.cuda.stream(s)``, ``set_stream``, ``wait_stream``, ``record_stream``, a graph's ``stream=``),
  and has only the generic API (no ``cuda_stream``, no ``priority``);
- a generic stream never equals a ``torch.cuda`` one, in either order, nor is it unequal (``!=`` compares the ids:
  torch's C ``__ne__``, which ``torch.cuda.Stream`` inherits), and their hashes differ; two generic streams of one
  id are equal, as are two ``torch.cuda`` ones (``torch.cuda.Stream(stream_id=...)``, ``streams.Stream``).
"""

from __future__ import annotations

from typing import Any

import torch

from seam.torch_cuda import streams
from seam.torch_cuda.ordinals import TORCH_DEVICE, as_cuda
from seam.torch_cuda.runtime import DEVICE

#: torch's own classes, taken before any emulation replaces the names.
TORCH_STREAM, TORCH_EVENT = torch.Stream, torch.Event
#: ``c10::DeviceType::CUDA``, as a generic object reports its device type.
_CUDA_TYPE = 1


def _on_device(device: Any) -> bool:
    """Whether ``device`` (``None``: the current accelerator, the emulated CUDA device) names CUDA."""
    return device is None or TORCH_DEVICE(as_cuda(device)).type == "cuda"


class _GenericMeta(type):
    """Calls make the device's generic stream or event; ``isinstance``/``issubclass`` answer for torch's own class,
    the emulated ``torch.cuda`` one and the generic one."""

    torch_class: type
    emulated: type

    def __instancecheck__(cls, instance: Any) -> bool:
        return type.__instancecheck__(cls, instance) or isinstance(instance, (cls.torch_class, cls.emulated))

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return isinstance(subclass, type) and (type.__subclasscheck__(cls, subclass)
                                               or issubclass(subclass, (cls.torch_class, cls.emulated)))

    def _wrap(cls, native: Any) -> Any:
        made = object.__new__(cls)
        made._native = native
        return made


class _StreamMeta(_GenericMeta):
    torch_class, emulated = TORCH_STREAM, streams.Stream

    def __call__(cls, device: Any = None, *, priority: int = 0, stream_id: int | None = None,
                 device_index: int | None = None, device_type: int | None = None, **kwargs: Any) -> Any:
        if stream_id is not None:
            if device_type in (None, _CUDA_TYPE):
                return cls._wrap(streams.Stream(stream_id=stream_id))
            return TORCH_STREAM(stream_id=stream_id, device_index=device_index, device_type=device_type, **kwargs)
        if _on_device(device):
            return cls._wrap(streams.Stream(priority=priority))
        return TORCH_STREAM(device=device, priority=priority, **kwargs)


class _EventMeta(_GenericMeta):
    torch_class, emulated = TORCH_EVENT, streams.Event

    def __call__(cls, device: Any = None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> Any:
        if _on_device(device):
            return cls._wrap(streams.Event(enable_timing=enable_timing, blocking=blocking, interprocess=interprocess))
        return TORCH_EVENT(device=device, enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)


class Stream(metaclass=_StreamMeta):
    """``torch.Stream`` of the emulated device: a generic view of one emulated stream."""

    _native: streams.Stream

    @property
    def stream_id(self) -> int:
        return self._native.stream_id

    @property
    def device_index(self) -> int:
        return 0

    @property
    def device_type(self) -> int:
        return _CUDA_TYPE

    @property
    def device(self) -> torch.device:
        return DEVICE

    @property
    def native_handle(self) -> int:
        return self._native.cuda_stream

    def query(self) -> bool:
        return self._native.query()

    def synchronize(self) -> None:
        self._native.synchronize()

    def record_event(self, event: Any = None) -> Any:
        event = event if event is not None else Event()
        event.record(self)
        return event

    def wait_event(self, event: Any) -> None:
        self._native.wait_event(event)

    def wait_stream(self, stream: Any) -> None:
        self._native.wait_stream(stream)

    def is_capturing(self) -> bool:
        return self._native.is_capturing()

    def __enter__(self) -> "Stream":
        self._native.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._native.__exit__(*exc)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, streams.Stream):
            return False  # a torch.cuda stream's __eq__, which Python asks first on a GPU, wants its own class
        if type(other) is Stream:
            return other.stream_id == self.stream_id
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if isinstance(other, (Stream, streams.Stream)):
            return other.stream_id != self.stream_id
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.stream_id, self.device_index, self.device_type))

    def __repr__(self) -> str:
        return f"torch.Stream device_type=cuda, device_index=0, stream_id={self.stream_id}"

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"'torch.Stream' object has no attribute '{name}'")


if not hasattr(TORCH_STREAM, "is_capturing"):  # torch's generic streams have it from 2.12 on (H100, torch 2.11: none)
    del Stream.is_capturing


class Event(metaclass=_EventMeta):
    """``torch.Event`` of the emulated device: a generic view of one emulated event. Until it is first recorded it
    names no device index and no native event (-1 and 0), as torch's, which makes the CUDA event at its first record."""

    _native: streams.Event

    @property
    def device(self) -> torch.device:
        return DEVICE if self._native.stream is not None else torch.device("cuda")

    @property
    def event_id(self) -> int:
        return self._native.cuda_event if self._native.stream is not None else 0

    def record(self, stream: Any = None) -> None:
        self._native.record(stream)

    def wait(self, stream: Any = None) -> None:
        self._native.wait(stream)

    def query(self) -> bool:
        return self._native.query()

    def synchronize(self) -> None:
        self._native.synchronize()

    def elapsed_time(self, end_event: Any) -> float:
        return self._native.elapsed_time(end_event)

    def ipc_handle(self) -> Any:
        return self._native.ipc_handle()

    @classmethod
    def from_ipc_handle(cls, device: Any, ipc_handle: Any) -> Any:
        raise RuntimeError("seamgate's CUDA emulator has no inter-process events")

    def __repr__(self) -> str:
        recorded = self._native.stream is not None
        flag = 1 if self._native.enable_timing else 0  # c10::EventFlag: PYTORCH_DEFAULT 0, BACKEND_DEFAULT 1
        return (f"torch.Event device_type=cuda, device_index={0 if recorded else -1}, event_flag={flag}, "
                f"event_id={self.event_id}")

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"'torch.Event' object has no attribute '{name}'")


for _stand_in, _own in ((Stream, TORCH_STREAM), (Event, TORCH_EVENT)):
    _stand_in.__module__, _stand_in.__qualname__, _stand_in.__doc__ = "torch", _own.__name__, _own.__doc__


#: (owner, name, replacement) for the installation.
GENERIC_PATCHES: list[tuple[Any, str, Any]] = [(torch, "Stream", Stream), (torch, "Event", Event)]
