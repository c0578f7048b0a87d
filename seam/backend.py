"""The backend protocol: queues, events, copies, allocation, the raw capture pair, stats and trace.

Three implementations share this base: ``EmulatedBackend`` (CPU, captures by recording and
replaying tensor operations), ``CudaBackend`` (torch CUDA graphs, streams, events) and
``EagerBackend`` (cannot capture: the control lane). Every public call is counted in ``stats`` and
appended to ``trace`` so a rule can be asserted as a counter or as an ORDER of backend calls.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence, TypeVar

import torch
from torch.utils._python_dispatch import _disable_current_modes as _no_dispatch_modes

from seam import collector
from seam.errors import CaptureDependencyError, CaptureInvalidatedError, CaptureStateError, CaptureSyncError

T = TypeVar("T")
_ids = itertools.count(1)
#: How many backend calls ``Backend.trace`` keeps.
TRACE_LIMIT = 100_000


def new_id() -> int:
    """A process-unique id for queues, events and graphs."""
    return next(_ids)


@dataclass(frozen=True)
class Queue:
    """An ordered work queue (a CUDA stream; a logical queue on the CPU backends)."""

    #: Stable id within the process, used in traces.
    id: int
    #: The native object (``torch.cuda.Stream``) or ``None``.
    native: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Event:
    """A point in one queue's work that another queue can wait for."""

    id: int
    #: The queue the event was recorded on.
    queue: Queue
    #: How many operations that queue had issued when the event was recorded (emulator bookkeeping).
    version: int = 0
    native: Any = field(default=None, compare=False, repr=False)
    #: The recording queue's vector clock, ``(queue id, operations)`` pairs (emulator bookkeeping).
    clock: tuple[tuple[int, int], ...] = field(default=(), compare=False, repr=False)
    #: Whether the event was recorded on a queue that was part of an open capture.
    captured: bool = False


def refuse_uncaptured_dependency(queue: Queue, event: Event) -> None:
    """A capturing queue may not wait on an event recorded outside the capture (CUDA refuses it)."""
    raise CaptureDependencyError(
        f"queue {queue.id} is capturing and was made to wait on event {event.id}, recorded on queue {event.queue.id} "
        "outside the capture (CUDA: dependency created on uncaptured work); synchronize that work before the "
        "capture begins, or record the event inside the capture"
    )


@dataclass(frozen=True)
class TraceEntry:
    """One backend call, in issue order."""

    #: The call: ``begin_capture``, ``end_capture``, ``record_event``, ``wait_event``, ``copy``, ...
    op: str
    #: The queue it was issued on, when it has one.
    queue: int | None = None
    #: A short detail (event id, graph id, bytes).
    detail: str = ""


@dataclass
class BackendStats:
    """Work counters: the shape of a lane (copies and launches), not the order of the runs."""

    #: Copies issued through ``copy()`` (including step-input refreshes).
    copies: int = 0
    #: Buffers made by ``alloc``, ``to_device`` and ``alloc_pinned``.
    allocs: int = 0
    #: Forward launches: an eager ``launch()`` outside capture, or one graph-segment ``replay()``.
    launches: int = 0
    #: Host synchronizations through ``synchronize()``.
    syncs: int = 0

    def snapshot(self) -> dict[str, int]:
        return {"copies": self.copies, "allocs": self.allocs, "launches": self.launches, "syncs": self.syncs}


def _dims(shape: Sequence[int] | int) -> tuple[int, ...]:
    """``shape`` as a tuple of dimensions (an int is a 1-D shape)."""
    return (shape,) if isinstance(shape, int) else tuple(shape)


class RawGraph:
    """A captured segment as the backend holds it; ``replay`` and ``destroy`` go through the backend.

    A segment dropped without ``destroy()`` (a reference cycle the collector breaks, a last
    reference gone) releases its native resources through ``seam.collector.release`` too, so a
    release that would fall inside another open capture waits for it to close.
    """

    def __init__(self) -> None:
        self.id = new_id()
        self.destroyed = False
        #: Its native release was handed to ``seam.collector`` (it runs now or after the last capture).
        self.release_requested = False

    def native_release(self) -> Callable[[], None]:
        """A callable that releases what this segment holds natively (it keeps that alive until run)."""
        return lambda: None

    def release(self, what: str) -> None:
        """Mark it dead and hand its native release to the collector guard (``seam.collector.release``)."""
        self.destroyed = self.release_requested = True
        collector.release(what, self.native_release())

    def __del__(self) -> None:
        if getattr(self, "release_requested", True) or collector is None or sys.is_finalizing():
            return  # interpreter shutdown: the modules it would call may be gone, and the process's memory goes too
        if not self.destroyed:
            self.release(f"graph {self.id} (collected)")
            return
        # Marked dead but never released: its native graph goes with this object, now, as CUDA frees
        # a graph whose last reference is gone, open capture or not. The guard cannot defer it.
        if collector.any_capture_open():
            collector.note_unsafe_call(f"release of graph {self.id} (collected, never released)")
        self.native_release()()


class _OpenCapture:
    """One open capture of a backend: the first unsafe call that invalidated it, if any."""

    def __init__(self, backend: str, queue: int) -> None:
        self.backend = backend
        self.queue = queue
        #: The first unsafe call made while this capture was open (CUDA's global capture mode).
        self.reason: str | None = None

    def invalidate(self, reason: str) -> None:
        self.reason = self.reason or reason

    def error(self) -> CaptureInvalidatedError:
        return CaptureInvalidatedError(
            f"the {self.backend} capture on queue {self.queue} was invalidated by {self.reason} while it was "
            "open: CUDA's global capture mode refuses it from anywhere in the process; release graphs, "
            "synchronize and read device values before the capture begins or after it ends"
        )


class Backend(ABC):
    """Shared bookkeeping; subclasses provide the native operations (``_native_*``)."""

    #: Platform arm / lane name: ``cpu-emulated``, ``cuda`` or ``eager``.
    name: str = "abstract"
    #: Whether ``begin_capture`` can work on this backend.
    can_capture: bool = False

    def __init__(self) -> None:
        self.stats = BackendStats()
        #: The last ``TRACE_LIMIT`` backend calls, oldest first (bounded: an engine replays forever).
        self.trace: collections.deque[TraceEntry] = collections.deque(maxlen=TRACE_LIMIT)
        self._default = self._make_queue()
        self._current: Queue = self._default
        self._capture_queue: Queue | None = None
        self._open_capture: _OpenCapture | None = None

    # -- bookkeeping -------------------------------------------------------------------------
    def _log(self, op: str, queue: Queue | None = None, detail: str = "") -> None:
        self.trace.append(TraceEntry(op, queue.id if queue is not None else None, detail))

    def trace_ops(self) -> list[str]:
        """The op names of ``trace``, in order (what ORDER assertions read)."""
        return [e.op for e in self.trace]

    @property
    def device(self) -> torch.device:
        """Where this backend's device buffers live (``cpu`` for the CPU backends): what a program
        written once for every arm passes as ``device=`` to a torch factory."""
        return torch.device("cpu")

    @property
    def capturing(self) -> bool:
        """Whether a raw capture is open on this backend."""
        return self._capture_queue is not None

    def _refuse_sync(self, what: str) -> None:
        """CUDA's global capture mode: a host sync is refused while ANY capture in the process is open."""
        if collector.any_capture_open():
            collector.note_unsafe_call(what)
            raise CaptureSyncError(
                f"{what} while a graph capture is open: a host sync invalidates the capture "
                "(CUDA's global capture mode refuses it from any queue); synchronize before the capture begins"
            )

    # -- queues and events -------------------------------------------------------------------
    def default_queue(self) -> Queue:
        """The backend's compute queue (on CUDA a dedicated non-default stream, so it can capture)."""
        return self._default

    def new_queue(self) -> Queue:
        """A new side queue."""
        q = self._make_queue()
        self._log("new_queue", q)
        return q

    def current_queue(self) -> Queue:
        return self._current

    @contextlib.contextmanager
    def use_queue(self, queue: Queue) -> Iterator[Queue]:
        """Issue the work of the ``with`` body on ``queue`` (``torch.cuda.stream`` on CUDA)."""
        previous, self._current = self._current, queue
        try:
            with self._native_use_queue(queue):
                yield queue
        finally:
            self._current = previous

    def record_event(self, queue: Queue) -> Event:
        """Record an event at the current end of ``queue``'s work."""
        ev = self._native_record_event(queue)
        self._log("record_event", queue, f"event={ev.id}")
        return ev

    def wait_event(self, queue: Queue, event: Event) -> None:
        """Make ``queue``'s later work wait for ``event``."""
        self._log("wait_event", queue, f"event={event.id} from={event.queue.id}")
        self._native_wait_event(queue, event)

    def event_synchronize(self, event: Event) -> None:
        """Block the host until ``event`` has happened (refused inside capture)."""
        self._refuse_sync("event_synchronize()")
        self._log("event_synchronize", event.queue, f"event={event.id}")
        self._native_event_synchronize(event)

    def synchronize(self) -> None:
        """Block the host until every queue is idle (refused inside capture)."""
        self._refuse_sync("synchronize()")
        self.stats.syncs += 1
        self._log("synchronize")
        self._native_synchronize()

    # -- memory and copies -------------------------------------------------------------------
    def alloc(self, shape: Sequence[int] | int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """A zero-filled device buffer."""
        self.stats.allocs += 1
        self._log("alloc")
        if collector.any_capture_open():
            if not (self._capture_queue is not None and self._capture_queue.id == self._default.id):
                raise CaptureStateError(
                    "alloc() while a capture is open on another queue: CUDA would allocate on a queue outside "
                    "the capture, which its global capture mode refuses (H200: zeros_on_other_stream_in_capture); "
                    "allocate the buffer before the capture begins")
            # Inside a capture on the default queue the buffer belongs to the graph: its zero-fill
            # is CAPTURED (it runs at every replay, not now), exactly as on CUDA.
            with self.use_queue(self._default):
                return self._native_alloc(_dims(shape), dtype)
        with self._handoff(self._default):
            return self._native_alloc(_dims(shape), dtype)

    def to_device(self, tensor: torch.Tensor) -> torch.Tensor:
        """A device copy of ``tensor``, made on the default queue (ordered after its zero-fill)."""
        out = self.alloc(tuple(tensor.shape), tensor.dtype)
        with self._handoff(self._default), self.use_queue(self._default), torch.no_grad():
            out.copy_(tensor)
        return out

    def alloc_pinned(self, shape: Sequence[int] | int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """A zero-filled pinned host buffer (the staging block of an asynchronous upload)."""
        self.stats.allocs += 1
        self._log("alloc_pinned")
        with _no_dispatch_modes():  # host memory: made now, never part of a capture
            return self._native_alloc_pinned(_dims(shape), dtype)

    def copy(self, dst: torch.Tensor, src: torch.Tensor, queue: Queue) -> None:
        """Copy ``src`` into ``dst`` on ``queue`` (pageable host sources are refused in capture)."""
        self.stats.copies += 1
        self._log("copy", queue, f"bytes={src.numel() * src.element_size()}")
        with self._handoff(queue), self.use_queue(queue), torch.no_grad():
            self._check_copy_in_capture(dst, src)  # on ``queue``: refused only where IT captures
            dst.copy_(src, non_blocking=True)

    def host_write(self, dst: torch.Tensor, src: torch.Tensor) -> None:
        """Write ``src`` into the HOST buffer ``dst`` now, on the host: never part of a capture."""
        with _no_dispatch_modes(), torch.no_grad():
            dst.copy_(src)

    def launch(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a forward eagerly, counted as one launch (inside capture it is recorded, not counted)."""
        if not self.capturing:
            self.stats.launches += 1
            self._log("launch", self._current)
        return fn(*args, **kwargs)

    # -- the raw capture pair ----------------------------------------------------------------
    def begin_capture(self, queue: Queue, pool: Any = None) -> None:
        """Start capturing the work issued on ``queue``."""
        if self.capturing:
            raise CaptureStateError("begin_capture while a capture is already open on this backend")
        if collector.any_capture_open():
            raise CaptureStateError(
                "begin_capture while another backend's capture is open in this process: CUDA cannot end a capture "
                "while another is open (H200: 'operation not permitted when stream is capturing', and the open one is "
                "invalidated too); end the open capture first")
        self._log("begin_capture", queue)
        record = _OpenCapture(self.name, queue.id)
        collector.capture_opening(record)
        try:
            self._native_begin_capture(queue, pool)
        except BaseException:
            collector.capture_closed(record)
            raise
        self._capture_queue, self._open_capture = queue, record

    def end_capture(self, queue: Queue) -> RawGraph:
        """Close the capture opened on ``queue`` and return the captured segment.

        A capture invalidated while it was open (see ``seam.collector``) ends in
        ``CaptureInvalidatedError`` naming the first unsafe call, on every backend.
        """
        if self._capture_queue is None or self._capture_queue.id != queue.id:
            raise CaptureStateError(f"end_capture on queue {queue.id} without a matching begin_capture")
        self._log("end_capture", queue)
        record = self._open_capture
        try:
            try:
                graph = self._native_end_capture(queue)
            except Exception as err:
                if record is not None and record.reason:
                    raise record.error() from err
                raise
            if record is not None and record.reason:
                # Never handed out: nothing of it is valid. Released through the guard now (it runs as
                # this capture closes, or after the last one open), not left to the error's traceback,
                # which a retry may drop inside its own capture.
                graph.release(f"graph {graph.id} (ended invalidated)")
                raise record.error()
            return graph
        finally:
            self._capture_queue, self._open_capture = None, None
            if record is not None:
                collector.capture_closed(record)

    def abort_capture(self, queue: Queue) -> None:
        """Close a failed capture, discarding what it recorded; never raises a secondary error."""
        if self._capture_queue is None:
            return
        self._log("abort_capture", queue)
        record = self._open_capture
        try:
            self._native_abort_capture(queue)
        finally:
            self._capture_queue, self._open_capture = None, None
            if record is not None:
                collector.capture_closed(record)

    def replay(self, graph: RawGraph, queue: Queue) -> None:
        """Launch one captured segment on ``queue``."""
        if graph.destroyed:
            raise CaptureStateError(f"replay of destroyed graph {graph.id}")
        self.stats.launches += 1
        self._log("replay", queue, f"graph={graph.id}")
        with self._handoff(queue), self.use_queue(queue):
            self._native_replay(graph, queue)

    def destroy(self, graph: RawGraph) -> None:
        """Release a captured segment: at once, or (while any capture is open) right after it closes.

        The segment can no longer replay from this call on either way (``seam.collector``).
        """
        if graph.destroyed:
            return
        self._log("destroy", None, f"graph={graph.id}")
        graph.release(f"graph {graph.id} (destroy())")

    def new_pool(self) -> Any:
        """A memory pool shared by the segments of one graph (``None`` where pools do not exist)."""
        return None

    # -- what subclasses implement -----------------------------------------------------------
    def _handoff(self, queue: Queue) -> contextlib.AbstractContextManager[Any]:
        """Order work issued on ``queue`` with the caller's own stream (in, then out); CPU: nothing."""
        return contextlib.nullcontext()

    def _make_queue(self) -> Queue:
        return Queue(new_id())

    def _native_use_queue(self, queue: Queue) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def _native_record_event(self, queue: Queue) -> Event:
        return Event(new_id(), queue)

    def _native_wait_event(self, queue: Queue, event: Event) -> None:
        return None

    def _native_synchronize(self) -> None:
        return None

    def _native_event_synchronize(self, event: Event) -> None:
        return None  # CPU backends run every copy to completion before returning

    def _check_copy_in_capture(self, dst: torch.Tensor, src: torch.Tensor) -> None:
        return None

    @abstractmethod
    def _native_alloc(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor: ...

    @abstractmethod
    def _native_alloc_pinned(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor: ...

    @abstractmethod
    def _native_begin_capture(self, queue: Queue, pool: Any) -> None: ...

    @abstractmethod
    def _native_end_capture(self, queue: Queue) -> RawGraph: ...

    @abstractmethod
    def _native_abort_capture(self, queue: Queue) -> None: ...

    @abstractmethod
    def _native_replay(self, graph: RawGraph, queue: Queue) -> None: ...
