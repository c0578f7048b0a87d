"""Emulated ``torch.cuda.Stream``, ``Event`` and the stream context: ordering as CUDA sees it.

Work on the CPU runs at once, so a stream orders nothing in time; what it still decides is WHICH
capture an operation belongs to. A stream that waits on an event recorded inside a capture joins
that capture (a fork); the capture's ``ForkLedger`` checks at its end that every fork was joined.
Host waits (``synchronize``, ``query``) are refused while a capture's mode forbids them, with
CUDA's words.
"""

from __future__ import annotations

import ctypes
import time
from typing import Any

import torch

from seam.emulator import GraphNode
from seam.torch_cuda import cuda_errors, in_flight, pending, runtime_api, sync_debug
from seam.torch_cuda.device import lazy_init
from seam.torch_cuda.kinds import storage_kind
from seam.torch_cuda.runtime import DEVICE, new_handle, register_default_stream, runtime


def native(value: Any) -> Any:
    """The emulated ``torch.cuda`` stream or event behind a generic ``torch.Stream`` or ``torch.Event``
    (``seam/torch_cuda/generic.py``), else ``value`` itself: the emulator's calls take either."""
    return getattr(value, "_native", value)


def refuse_host_wait(what: str, *, capturing_stream: bool = False) -> None:
    """A host wait is refused while a capture that forbids it is open; it invalidates that capture."""
    rt = runtime()
    # waiting on a capturing stream is refused in every mode
    refusing = list(rt.captures) if capturing_stream else rt.refusing_captures()
    rt.refuse_unsafe(refusing, f"{what} while a graph capture is open waits on the host")


class _DerivedFromGeneric(type):
    """On a GPU ``torch.cuda.Stream`` and ``torch.cuda.Event`` derive from ``torch.Stream`` and ``torch.Event``. Here
    they cannot (torch's own classes refuse the emulated device; their stand-ins, ``generic.py``, make generic
    objects when called), so ``isinstance`` and ``issubclass`` answer through the stand-ins' metaclass, and ``mro()``
    names the generic class before ``object``, as a GPU's does. Python's own lookup order (``__mro__``, which this
    same method computes while the class is made) stays the class's own chain."""

    generic_name: str

    def mro(cls) -> list[type]:
        order = type.mro(cls)
        if type.__dict__["__mro__"].__get__(cls) is None:  # the class is being made: its real order
            return order
        generic = getattr(torch, cls.generic_name)
        return order if generic in order else [*order[:-1], generic, object]


class _StreamType(_DerivedFromGeneric):
    generic_name = "Stream"


class _EventType(_DerivedFromGeneric):
    generic_name = "Event"


class Stream(metaclass=_StreamType):
    """``torch.cuda.Stream`` on the emulated device."""

    def __new__(cls, device: Any = None, priority: int = 0, **kwargs: Any) -> "Stream":
        if kwargs.get("stream_id") is not None:  # torch.cuda.Stream(stream_id=..., device_index=..., device_type=...)
            return cls._known(int(kwargs["stream_id"]))
        return cls._make(cuda_stream=new_handle(), priority=priority)

    @classmethod
    def _make(cls, *, cuda_stream: int, priority: int = 0, external: bool = False, made: bool = True) -> "Stream":
        self = object.__new__(cls)
        self.cuda_stream = cuda_stream
        self.priority = runtime_api.clamp_priority(priority)
        self.device = DEVICE
        self.device_index = 0
        self.device_type = 1  # c10::DeviceType::CUDA
        # A stream's id is not its handle on a GPU (torch encodes a pool index in it; an external stream's is its
        # handle): odd here, so never a handle, which is a multiple of 16.
        self.stream_id = cuda_stream if external or not cuda_stream else cuda_stream << 1 | 1
        if cuda_stream and made:
            rt = runtime()
            rt.streams_by_id[self.stream_id] = (cuda_stream, self.priority)
            rt.fire("StreamCreationCallbacks", cuda_stream)
        return self

    @classmethod
    def _known(cls, stream_id: int) -> "Stream":
        """Another object for the stream of ``stream_id`` (torch's own ``current_stream`` and dynamo make them so):
        equal to it, of its priority; an id no stream here has names an external stream (its id is its handle)."""
        cuda_stream, priority = runtime().streams_by_id.get(stream_id, (stream_id, 0))
        return cls._make(cuda_stream=cuda_stream, priority=priority, external=cuda_stream == stream_id, made=False)

    @classmethod
    def of_handle(cls, handle: int | None) -> "Stream":
        """The stream whose ``cudaStream_t`` is ``handle`` (what a library called through ``ctypes`` is given; 0 or
        None: the legacy default stream); a handle no stream here made names an external stream."""
        rt = runtime()
        if not handle:
            return rt.default_stream
        made = handle << 1 | 1  # the id a stream made here has (``_make``)
        return cls._known(made if made in rt.streams_by_id else handle)

    @property
    def native_handle(self) -> int:
        """``torch.Stream.native_handle``: the ``cudaStream_t``."""
        return self.cuda_stream

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    @staticmethod
    def priority_range() -> tuple[int, int]:
        """(lowest, greatest) priority: the H200's, as torch reports it (``runtime_api.PRIORITY_RANGE``)."""
        return runtime_api.priority_range()

    @property
    def _id(self) -> int:
        """The id the fork ledger knows this stream by (not public: a GPU's ``torch.cuda.Stream`` has no ``id``)."""
        return self.cuda_stream

    def wait_event(self, event: "Event") -> None:
        native(event).wait(self)

    def wait_stream(self, stream: "Stream") -> None:
        self.wait_event(native(stream).record_event())

    def record_event(self, event: "Event | None" = None) -> "Event":
        event = event if event is not None else Event()
        event.record(self)
        return event

    def is_capturing(self) -> bool:
        """``torch.Stream.is_capturing``: whether this stream's work goes to an open capture (its own, or
        one it was forked into). torch's optimizers ask it on every ``step()``."""
        return runtime().capture_of(self._id) is not None

    def query(self) -> bool:
        refuse_host_wait("cudaStreamQuery", capturing_stream=runtime().capture_of(self._id) is not None)
        in_flight.settle(runtime())
        return time.perf_counter() >= pending.ends(self._id)

    def synchronize(self) -> None:
        # a host wait: flagged in sync debug mode (torch.cuda.synchronize() is not, as on the GPU), and the GPU trace's
        # stream synchronization fired, before CUDA is asked (``c10::cuda::stream_synchronize``)
        sync_debug.flag(self)
        refuse_host_wait("cudaStreamSynchronize", capturing_stream=runtime().capture_of(self._id) is not None)
        in_flight.settle(runtime())
        pending.wait_for(self._id)

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:
        """What ``ctypes`` passes for the stream: its handle, as ``torch.cuda.Stream``'s."""
        return ctypes.c_void_p(self.cuda_stream)

    def __enter__(self) -> "Stream":
        """``with s:``, ``torch.Stream``'s own context protocol (``torch.accelerator`` code writes ``with stream,
        graph:``): ``s`` is current until the block ends, then the stream before it again."""
        context = StreamContext(self)
        self.__dict__.setdefault("_contexts", []).append(context)
        context.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.__dict__["_contexts"].pop().__exit__(*exc)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream

    def __ne__(self, other: object) -> bool:
        """torch's C ``__ne__``, which ``torch.cuda.Stream`` inherits: the ids differ (a generic stream too)."""
        other_id = getattr(other, "stream_id", None)
        return NotImplemented if other_id is None else other_id != self.stream_id

    def __hash__(self) -> int:
        return hash((self.cuda_stream, 0))

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device=cuda:0 cuda_stream={self.cuda_stream:#x}>"

    @property
    def _as_parameter_(self) -> Any:
        import ctypes

        return ctypes.c_void_p(self.cuda_stream)


class ExternalStream(Stream):
    """``torch.cuda.ExternalStream``: a stream made elsewhere, known by its handle."""

    def __new__(cls, stream_ptr: int, device: Any = None, **kwargs: Any) -> "ExternalStream":
        return cls._make(cuda_stream=int(stream_ptr), external=True)


class Event(metaclass=_EventType):
    """``torch.cuda.Event`` on the emulated device."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False,
                 external: bool = False) -> None:
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.interprocess = interprocess
        self.external = external
        #: Its handle: none (0) until CUDA makes the event, at its first record, as torch's ``CUDAEvent``.
        self.cuda_event = 0
        #: The stream it was last recorded on, its clock there, and whether inside a capture.
        self.stream: Stream | None = None
        self.clock: tuple[tuple[int, int], ...] = ()
        self.captured = False
        self.time: float | None = None
        #: When the work queued before it on its stream ends (``pending.py``): it is complete from then on.
        self.done = 0.0
        #: Whether CUDA made the event: at its first record, as torch's ``CUDAEvent`` makes it (the GPU trace's
        #: creation fires then, and only a made event's deletion fires).
        self.made = False

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:
        """What ``ctypes`` passes for the event: its handle, as ``torch.cuda.Event``'s."""
        return ctypes.c_void_p(self.cuda_event)

    def __del__(self) -> None:
        if self.__dict__.get("made"):
            try:
                runtime().fire("EventDeletionCallbacks", self.cuda_event)
            except Exception:  # an interpreter shutting down: nothing left to tell
                pass

    def record(self, stream: Stream | None = None) -> None:
        rt = runtime()
        stream = native(stream) if stream is not None else rt.current_stream()
        if not self.made:
            self.made, self.cuda_event = True, new_handle()
            rt.fire("EventCreationCallbacks", self.cuda_event)
        capture = rt.capture_of(stream._id)
        self.stream = stream
        if capture is not None:
            clock = capture.ledger.clock(stream._id)
            self.clock, self.captured = tuple(sorted(clock.items())), True
            if self.external:
                capture.ops.append(_EventRecordNode(self))
        else:
            self.clock, self.captured = (), False
            self.done = pending.ends(stream._id)
            self.time = max(time.perf_counter(), self.done)
        rt.fire("EventRecordCallbacks", self.cuda_event, stream.cuda_stream)

    def wait(self, stream: Stream | None = None) -> None:
        rt = runtime()
        stream = native(stream) if stream is not None else rt.current_stream()
        if self.made:  # CUDA waits on, and traces, a made event only
            rt.fire("EventWaitCallbacks", self.cuda_event, stream.cuda_stream)
        in_flight.settle(rt)  # the waiting stream's next work runs after the replays in flight
        if self.stream is None:
            return  # CUDA: waiting on an event never recorded is a no-op
        if not self.captured:
            pending.inherit(stream._id, self.done)
        waiter = rt.capture_of(stream._id)
        if waiter is not None and not self.captured:
            waiter.invalidate("a wait on uncaptured work")
            raise cuda_errors.cuda_error(cuda_errors.UNCAPTURED_DEPENDENCY,
                                         "a capturing stream waited on an event recorded outside the capture")
        owner = rt.capture_of(self.stream._id)
        if owner is not None and self.captured:
            owner.ledger.on_wait(stream._id, self.stream._id, self.clock)

    def _refuse_if_captured(self, what: str) -> None:
        if self.captured and self.stream is not None and runtime().capture_of(self.stream._id) is not None:
            capture = runtime().capture_of(self.stream._id)
            if capture is not None:
                capture.invalidate(what)
            raise cuda_errors.cuda_error(cuda_errors.EVENT_IN_CAPTURE, f"{what} of an event recorded in the capture")

    def query(self) -> bool:
        self._refuse_if_captured("cudaEventQuery")
        refuse_host_wait("cudaEventQuery")
        in_flight.settle(runtime())
        return time.perf_counter() >= self.done

    def synchronize(self) -> None:
        self._refuse_if_captured("cudaEventSynchronize")
        refuse_host_wait("cudaEventSynchronize")
        in_flight.settle(runtime())
        pending.wait_until(self.done)
        if self.made:
            runtime().fire("EventSynchronizationCallbacks", self.cuda_event)

    def elapsed_time(self, end_event: "Event") -> float:
        end_event = native(end_event)
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self.stream is None or end_event.stream is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        if self.time is None or end_event.time is None:
            raise cuda_errors.cuda_error(cuda_errors.INVALID_ARGUMENT, "an event recorded inside a capture has no time")
        return max(0.0, (end_event.time - self.time) * 1000.0)

    def ipc_handle(self) -> Any:
        raise RuntimeError("seamgate's CUDA emulator has no inter-process events")

    def __repr__(self) -> str:
        return f"<torch.cuda.Event {self.cuda_event:#x}>" if self.cuda_event else "<torch.cuda.Event uninitialized>"


class _EventRecordNode(GraphNode):
    """An external event's record inside a capture (``cudaEventRecordWithFlags(..., external)``): a node
    of the graph, so each replay records the event where the capture did, and times the replay."""

    __name__ = "cudaEventRecordWithFlags"

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event

    def run(self) -> None:
        self.event.time = time.perf_counter()


if not hasattr(torch._C.Stream, "is_capturing"):
    # The emulator follows the torch it runs on: before 2.12 torch's streams have no ``is_capturing`` (the H200's
    # torch 2.11 raised AttributeError where the emulated stream answered).
    del Stream.is_capturing


for _class in (Stream, ExternalStream, Event):
    _class.__module__ = "torch.cuda.streams"  # as on a GPU: type(torch.cuda.current_stream()) names torch's module


class StreamContext:
    """``torch.cuda.stream(s)`` / ``torch.cuda.StreamContext``: ``s`` is current inside the block."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self._previous: list[Stream | None] = []

    def __enter__(self) -> Stream | None:
        rt = runtime()
        self._previous.append(rt.per_thread.stream)
        if self.stream is not None:
            rt.set_current(native(self.stream))
        return self.stream

    def __exit__(self, *exc: object) -> None:
        runtime().set_current(self._previous.pop())


register_default_stream(lambda: Stream._make(cuda_stream=0))  # the runtime's default stream, made as it starts


def stream(s: Stream | None) -> StreamContext:
    return StreamContext(s)


def current_stream(device: Any = None) -> Stream:
    lazy_init()
    return runtime().current_stream()


def default_stream(device: Any = None) -> Stream:
    lazy_init()
    return runtime().default_stream


def set_stream(s: Stream | None) -> None:
    if s is not None:
        runtime().set_current(native(s))


def synchronize(device: Any = None) -> None:
    lazy_init()
    rt = runtime()
    refuse_host_wait("cudaDeviceSynchronize", capturing_stream=bool(rt.captures))
    in_flight.settle(rt)
    pending.wait_until(pending.device_end())
    rt.fire("DeviceSynchronizationCallbacks")


def sleep(cycles: int) -> None:
    """``torch.cuda._sleep``: a spin kernel that holds the current stream busy for ``cycles`` of the device's clock
    (``pending.py``); inside a capture it queues nothing."""
    cycles = int(cycles)  # torch's binding takes an integer only, in a capture too
    rt = runtime()
    stream = rt.current_stream()
    if rt.capture_of(stream._id) is None:
        pending.queue_sleep(stream._id, cycles)


def record_stream(tensor: torch.Tensor, s: Any) -> None:
    """``Tensor.record_stream``: the caching allocator's bookkeeping: the block's free waits for the work ``s``
    has queued by then (``pending.py``); nothing to order on the CPU."""
    s = native(s)
    if not isinstance(s, Stream):
        raise TypeError(f"record_stream(): argument 'stream' must be torch.cuda.Stream, not {type(s).__name__}")
    storage = tensor.untyped_storage()
    if storage_kind(storage) == "device":
        pending.note_stream_use(storage, s._id)
