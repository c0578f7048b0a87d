"""``CudaBackend``: real torch CUDA graphs, streams and events.

The default queue is a dedicated non-default stream (CUDA refuses to capture the legacy default
stream). While a capture is open a ``CaptureGuard`` raises the seam's errors for a host sync or a
pageable host-to-device copy before CUDA invalidates the capture, and an unjoined fork at the close
(``cudaErrorStreamCaptureUnjoined``) is re-raised as ``UnjoinedForkError`` with the CUDA error
chained as its cause.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, Iterator

import torch

from seam.backend import Backend, Event, Queue, RawGraph, new_id, refuse_uncaptured_dependency
from seam.capture_guard import CaptureGuard, HostReadGuard, MemoryKind, check_copy
from seam.errors import CaptureError, CaptureInvalidatedError, CaptureStateError, CaptureUnsupportedError, UnjoinedForkError


def memory_kind(t: torch.Tensor) -> MemoryKind:
    """Device, pinned host or pageable host, read off the tensor itself."""
    if t.device.type == "cuda":
        return "device"
    return "pinned" if t.is_pinned() else "pageable"


def _end_allocation_to_pool(pool: Any) -> None:
    """After a ``capture_end`` CUDA refused: end the caching allocator's capture into ``pool`` ourselves.

    torch's ``CUDAGraph::capture_end`` raises at ``cudaStreamEndCapture`` (an unjoined fork, an invalidated
    capture) BEFORE it tells the allocator the capture ended (torch 2.11): the allocator then counts a capture
    underway for the rest of the process, and neither ``empty_cache`` nor an out-of-memory retry releases a cached
    segment again (H200, session 15: after the fidelity corpus's unjoined-fork program, the memory-fraction tests
    of the same process failed). The emulated device keeps the entry as torch does (``seam/torch_cuda/routes.py``)."""
    if pool is None:
        return
    with contextlib.suppress(RuntimeError):  # not recording to it (a torch that ended it itself)
        torch._C._cuda_endAllocateToPool(torch.cuda.current_device(), pool)


def end_generator_capture(device: Any) -> None:
    """After a ``capture_end`` CUDA refused: end the default CUDA generator's capture with an empty one.

    torch's ``CUDAGraph::capture_end`` runs its generator states' ``capture_epilogue`` only after
    ``cudaStreamEndCapture`` succeeds (torch 2.11), so a refused end leaves the default generator counting itself
    capturing, and every later eager draw on the device raises "Offset increment outside graph capture encountered
    unexpectedly." (H100, session 23: one refused end in tests/seam failed every later ``torch.randn(device=...)``
    of its process). torch has no call that ends it; a capture that CUDA accepts runs the prologue and epilogue, and
    an empty one on a stream of its own touches nothing else (its "graph is empty" warning is not the user's)."""
    graph, stream = torch.cuda.CUDAGraph(), torch.cuda.Stream(device=device)
    with warnings.catch_warnings(), contextlib.suppress(RuntimeError):
        warnings.simplefilter("ignore", UserWarning)
        with torch.cuda.stream(stream):
            graph.capture_begin(capture_error_mode="relaxed")
            graph.capture_end()
        graph.reset()


def _after_a_refused_end(pool: Any, device: Any) -> None:
    """What a ``capture_end`` CUDA refused leaves behind, undone: the allocator's and the generator's captures."""
    _end_allocation_to_pool(pool)
    end_generator_capture(device)


class CudaGraph(RawGraph):
    """One captured segment: a ``torch.cuda.CUDAGraph``."""

    def __init__(self, graph: torch.cuda.CUDAGraph) -> None:
        super().__init__()
        self.graph = graph

    def native_release(self) -> Callable[[], None]:
        # The closure holds the torch graph, so a deferred release keeps its executable (and its
        # pool's blocks) alive until the open capture has closed.
        graph = self.graph
        return graph.reset


class CudaBackend(Backend):
    """The real thing: needs a CUDA build of torch and a GPU."""

    name = "cuda"
    can_capture = True
    #: The CUDA device (an instance attribute set in ``__init__``; shadows ``Backend.device``).
    device: torch.device = torch.device("cuda")  # type: ignore[assignment]

    def __init__(self, device: int | str | torch.device = "cuda") -> None:
        if not torch.cuda.is_available():
            raise CaptureUnsupportedError("CudaBackend needs a CUDA device (torch.cuda.is_available() is False)")
        self.device = torch.device(device)
        self._open: torch.cuda.CUDAGraph | None = None
        #: The pool the open capture allocates from (``_end_allocation_to_pool`` needs it when CUDA refuses the end).
        self._open_pool: Any = None
        self._guard: CaptureGuard | None = None
        self._host_reads: HostReadGuard | None = None
        super().__init__()

    def _make_queue(self) -> Queue:
        return Queue(new_id(), torch.cuda.Stream(device=self.device))

    @contextlib.contextmanager
    def _handoff(self, queue: Queue) -> Iterator[None]:
        """The queue waits for what the caller's current stream issued before; the caller's stream
        waits for what the queue did. So a result of ``copy``/``replay``/``alloc`` can be read on any
        stream without a ``synchronize()`` (the H200 showed a ``.cpu()`` on torch's current stream
        racing a replay on the seam's queue). Not inside capture: there the caller IS the queue."""
        caller = torch.cuda.current_stream(self.device)
        if self.capturing or caller == queue.native:
            yield
            return
        queue.native.wait_stream(caller)
        try:
            yield
        finally:
            caller.wait_stream(queue.native)

    def _native_use_queue(self, queue: Queue) -> contextlib.AbstractContextManager[Any]:
        return torch.cuda.stream(queue.native)

    def _native_record_event(self, queue: Queue) -> Event:
        ev = torch.cuda.Event()
        ev.record(queue.native)
        return Event(new_id(), queue, 0, ev)

    def _native_wait_event(self, queue: Queue, event: Event) -> None:
        try:
            queue.native.wait_event(event.native)
        except RuntimeError as err:
            if "uncaptured work" in str(err):
                try:
                    refuse_uncaptured_dependency(queue, event)
                except CaptureError as mine:
                    raise mine from err
            raise

    def _native_event_synchronize(self, event: Event) -> None:
        event.native.synchronize()

    def _native_synchronize(self) -> None:
        torch.cuda.synchronize(self.device)

    def _native_alloc(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        with torch.cuda.stream(self._default.native):
            return torch.zeros(shape, dtype=dtype, device=self.device)

    def _native_alloc_pinned(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        return torch.zeros(shape, dtype=dtype, pin_memory=True)

    def _check_copy_in_capture(self, dst: torch.Tensor, src: torch.Tensor) -> None:
        if torch.cuda.is_current_stream_capturing():
            check_copy(memory_kind(dst), memory_kind(src))

    def new_pool(self) -> Any:
        return torch.cuda.graph_pool_handle()

    def _native_begin_capture(self, queue: Queue, pool: Any) -> None:
        # A capture given no pool gets a private one of its own, as torch would make it, but one whose id is known
        # here: after a capture_end CUDA refuses, ``_end_allocation_to_pool`` needs it (H200, session 16: a capture
        # begun with no pool and refused at its end left the allocator counting it underway; tests/seam's
        # invalidated-capture test, then empty_cache released nothing for the rest of the process).
        pool = self.new_pool() if pool is None else pool
        # Work queued on other streams before the capture must not race into it.
        queue.native.wait_stream(torch.cuda.current_stream(self.device))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.stream(queue.native):
            graph.capture_begin(pool=pool)
        self._open, self._open_pool = graph, pool
        self._guard = CaptureGuard(memory_kind, torch.cuda.is_current_stream_capturing)
        self._guard.__enter__()
        self._host_reads = HostReadGuard(memory_kind, torch.cuda.is_current_stream_capturing,
                                         lambda device: torch.device(device).type == "cuda")
        self._host_reads.__enter__()

    def _close(self) -> torch.cuda.CUDAGraph:
        graph, guard, host_reads = self._open, self._guard, self._host_reads
        self._open, self._guard, self._host_reads = None, None, None
        if host_reads is not None:
            host_reads.__exit__(None, None, None)
        if guard is not None:
            guard.__exit__(None, None, None)
        if graph is None:
            raise CaptureStateError("no CUDA capture is open")
        return graph

    def _native_end_capture(self, queue: Queue) -> RawGraph:
        pool = self._open_pool
        graph = self._close()
        try:
            with torch.cuda.stream(queue.native):
                graph.capture_end()
        except RuntimeError as err:
            _after_a_refused_end(pool, self.device)
            text = str(err).lower()
            if "unjoined" in text:
                raise UnjoinedForkError(
                    "a side stream forked into the capture was not joined before end_capture "
                    "(cudaErrorStreamCaptureUnjoined); note_fork it so the scope joins it"
                ) from err
            if "previous error during capture" in text or "invalidated" in text:
                raise CaptureInvalidatedError(
                    "CUDA invalidated the capture (cudaErrorStreamCaptureInvalidated): a call CUDA's global "
                    "capture mode refuses ran while it was open; the CUDA warning printed before names it"
                ) from err
            raise
        return CudaGraph(graph)

    def _native_abort_capture(self, queue: Queue) -> None:
        pool = self._open_pool
        graph = self._close()
        try:
            with torch.cuda.stream(queue.native):
                graph.capture_end()
        except RuntimeError:
            _after_a_refused_end(pool, self.device)
        with contextlib.suppress(RuntimeError):
            graph.reset()

    def _native_replay(self, graph: RawGraph, queue: Queue) -> None:
        if not isinstance(graph, CudaGraph):
            raise CaptureStateError(f"graph {graph.id} was not captured by a CudaBackend")
        graph.graph.replay()
