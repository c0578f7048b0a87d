"""The emulated device's process state: streams per thread, open captures, the RNG, gpu-trace.

One ``Runtime`` per process, made when emulation first starts and RESET each time the outermost
``emulate_cuda()`` is entered, so nothing one test did (a stream left current, a capture left open,
a seed) reaches the next.
"""

from __future__ import annotations

import functools
import itertools
import os
import threading
from typing import TYPE_CHECKING, Any, Callable

import torch

from seam.torch_cuda import allocator, gc_pace, host_cache, in_flight, pending
from seam.torch_cuda.allocator import CachingAllocator
from seam.torch_cuda.cuda_errors import ALREADY_RECORDING, NOT_PERMITTED, cuda_error, torch_error

if TYPE_CHECKING:  # the runtime holds these; they import the runtime
    from seam.torch_cuda.capture import OpenCapture
    from seam.torch_cuda.streams import Stream

#: The one emulated device.
DEVICE = torch.device("cuda", 0)
CPU = torch.device("cpu")
#: The variable CUDA reads, as it initialises, for the devices a process may see.
VISIBLE = "CUDA_VISIBLE_DEVICES"

_handles = itertools.count(0x7E5A0000, 0x10)


def new_handle() -> int:
    """A process-unique integer that plays a native handle (``cudaStream_t``, ``cudaEvent_t``)."""
    return next(_handles)


class DeviceRng:
    """One CUDA generator's state as CUDA keeps it (``CUDAGeneratorState``): a seed and a Philox offset
    (16 bytes), not a Mersenne twister. Each random operation draws at the current offset and moves it
    on by what its kernel draws (``seam/torch_cuda/philox.py``).

    Graph-safe RNG, as CUDA does it: a capture of a graph this state is registered with (the default
    generator's always is; another through ``CUDAGraph.register_generator_state``) draws at offsets
    INSIDE the graph (``intragraph``) and leaves the offset alone; the graph's whole increment is
    known at its end. Each replay first reads the seed and offset the state holds then (``extragraph``)
    and moves the offset on by that increment, and each recorded draw is made at the replay's base
    offset plus its own offset inside the graph. So replays differ, a re-seed repeats them, and a
    replay draws what the same eager operations would draw from the same state.
    """

    def __init__(self, seed: int, offset: int = 0) -> None:
        self.seed = seed & 0xFFFFFFFFFFFFFFFF
        self.offset = offset
        #: Whether a capture of a graph this state is registered with is open.
        self.capturing = False
        #: The next draw's offset inside the graph being captured.
        self.intragraph = 0
        #: The seed and base offset the last replay (or the capture) read: recorded draws use them.
        self.seed_extragraph = self.seed
        self.offset_extragraph = 0
        #: Graphs registered with this state: while any is, its seed and offset holders are allocated
        #: (``capture.CUDAGraph._hold``).
        self.graphs = 0

    def manual_seed(self, seed: int) -> None:
        self.seed, self.offset = int(seed) & 0xFFFFFFFFFFFFFFFF, 0

    @staticmethod
    def mix(seed: int, offset: int) -> int:
        """The CPU generator's seed that stands for Philox's stream at (``seed``, ``offset``)."""
        return (seed * 0x9E3779B97F4A7C15 + offset * 0xBF58476D1CE4E5B9 + 1) & 0xFFFFFFFFFFFFFFFF

    def next_draw_seed(self) -> int:
        """An eager draw: at the current offset (``advance`` moves it on once the draw is done)."""
        if self.capturing:
            raise RuntimeError("Offset increment outside graph capture encountered unexpectedly.")
        return self.mix(self.seed, self.offset)

    def capture_draw(self) -> int:
        """A draw recorded in a capture: its offset inside the graph (a replay draws at base + it)."""
        if not self.capturing:
            raise RuntimeError("Attempt to increase offset for a CUDA generator not in capture mode.")
        return self.intragraph

    def advance(self, step: int) -> None:
        """A draw is done: the offset (inside the graph, while capturing) moves on by ``step``
        (``seam/torch_cuda/philox.py``)."""
        if self.capturing:
            self.intragraph += step
        else:
            self.offset += step

    def replay_seed(self, at: int) -> int:
        """The seed of a recorded draw at ``at`` inside the graph, in the replay under way."""
        return self.mix(self.seed_extragraph, self.offset_extragraph + at)

    def capture_prologue(self) -> None:
        self.capturing, self.intragraph = True, 0
        self.seed_extragraph, self.offset_extragraph = self.seed, 0

    def capture_epilogue(self) -> int:
        """The capture ends: the graph's whole increment."""
        self.capturing = False
        return self.intragraph

    def replay_prologue(self, increment: int) -> None:
        self.seed_extragraph, self.offset_extragraph = self.seed, self.offset
        self.offset += increment

    def clone(self) -> "DeviceRng":
        return DeviceRng(self.seed, self.offset)

    def get_state(self) -> torch.Tensor:
        return torch.tensor(list(self.seed.to_bytes(8, "little") + self.offset.to_bytes(8, "little")),
                            dtype=torch.uint8)

    def set_state(self, state: torch.Tensor) -> None:
        raw = bytes(int(b) for b in state.reshape(-1).tolist())
        if len(raw) != 16:
            raise RuntimeError(f"RNG state is wrong size: expected 16 bytes, got {len(raw)}")
        self.seed, self.offset = int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little")


_NOT_READY = object()
#: Switches kept per thread; past it the older half goes (their nodes are long gone, or read the oldest kept).
_SWITCHES_KEPT = 1 << 16


def _note_switch(per_thread: "_PerThread", stream: "Stream") -> None:
    """Keep that the thread's autograd nodes from now on are made on ``stream``: the sequence number a node made now
    would take (a throwaway node takes it; autograd numbers nodes per thread, as torch's engine orders them), and
    the stream. The streams an autograd backward runs its nodes on are read from this (``backward_streams.py``)."""
    seq = torch._C._functions.DelayedError("", 0)._sequence_nr()
    seqs, streams = per_thread.switch_seqs, per_thread.switch_streams
    if seqs and seqs[-1] == seq - 1:  # no node was made since the last switch: it is replaced
        seqs[-1], streams[-1] = seq, stream
        return
    if len(seqs) >= _SWITCHES_KEPT:
        del seqs[: _SWITCHES_KEPT // 2], streams[: _SWITCHES_KEPT // 2]
    seqs.append(seq)
    streams.append(stream)


class _PerThread(threading.local):
    """What one thread of the emulated device holds: its current stream (written only by ``Runtime.set_current``,
    which keeps ``stream`` and ``current`` in step)."""

    def __init__(self, default_stream: "Stream") -> None:
        self.stream: Stream | None = None
        #: True while the emulation's own ``Tensor.to`` makes a host copy (``tensor_methods.host_copy``): a
        #: ``_to_copy`` to the CPU at any other time is torch's C++ converting with the tensor's own options.
        self.host_copy = False
        #: The current stream, never None (``stream`` or the default one): what ``Runtime.current_stream`` and the
        #: device mode's fast path read, one access to this thread-local object where two would be.
        self.current: Stream = default_stream
        #: The stream on which this thread's cuBLAS handle and both workspaces exist, in ``blas_for`` (the
        #: runtime's ``workspaces`` then): a product there has nothing to note (``seam.torch_cuda.workspaces.note``),
        #: which the device mode's fast path reads.
        self.blas_ready: Any = _NOT_READY
        self.blas_for: Any = None
        #: Which stream was current when each of this thread's autograd nodes was made (``backward_streams.py``):
        #: the sequence number the thread's next node would take at each change of stream, and the stream then.
        #: Empty until a stream other than the default one is made current.
        self.switch_seqs: list[int] = []
        self.switch_streams: list[Stream] = []


class Runtime:
    """Everything the emulated CUDA device remembers between calls."""

    def __init__(self) -> None:
        if _make_default_stream is None:
            raise RuntimeError("the emulated CUDA runtime has no default stream: seam.torch_cuda.streams was not "
                               "imported (importing seam.torch_cuda does it); import the package, not the runtime alone")
        #: The legacy default stream (``cuda_stream == 0``), where no capture may begin.
        self.default_stream = _make_default_stream()
        self.per_thread = _PerThread(self.default_stream)
        #: Each stream made here by its id: (handle, priority), for ``torch.cuda.Stream(stream_id=...)``.
        self.streams_by_id: dict[int, tuple[int, int]] = {}
        #: Whether CUDA is initialised (``device.lazy_init``): a fresh device is not.
        self.initialized = False
        #: The devices the driver found as it initialised (``CUDA_VISIBLE_DEVICES`` read then, once): None until the
        #: first call that initialises it (``device.driver_devices``: ``is_available``, torch's lazy init, ``cuInit``).
        self.driver_devices: int | None = None
        #: torch's ``device_count`` keeps its first count after CUDA is initialised (``device.device_count``).
        self.counted: int | None = None
        #: ``CUDA_VISIBLE_DEVICES`` as the emulation found it: it picks the machine's GPUs, not the emulated device
        #: (``device.visible_count`` obeys only a value the program sets while emulating).
        self.inherited_visible_devices = os.environ.get(VISIBLE)
        #: Open captures, in begin order (CUDA allows several, on different streams).
        self.captures: list[OpenCapture] = []
        #: Threads whose cuBLAS handle exists (made by a matmul outside any capture).
        self.blas_threads: set[int] = set()
        #: Threads whose cuDNN handle exists (made by a convolution outside any capture).
        self.cudnn_threads: set[int] = set()
        #: cuBLAS workspaces (by thread and stream) and cuBLASLt ones (by stream) allocated so far
        #: (``seam.torch_cuda.workspaces``).
        self.workspaces: dict[tuple[Any, ...], None] = {}
        #: The device's generator: ``torch.cuda.manual_seed`` seeds it; device random ops draw from it.
        self.rng = DeviceRng(torch.initial_seed())
        #: Whether ``torch._C._activate_gpu_trace()`` was called (then the callbacks fire).
        self.gpu_trace = False
        self.pool_ids = itertools.count(1)
        #: Graph memory pools by handle (``seam.torch_cuda.pools``).
        self.pools: dict[tuple[int, int], Any] = {}
        #: The caching allocator's book-keeping: what ``torch.cuda.memory_stats`` reports.
        self.allocator = CachingAllocator()
        #: CUDA's ``captures_underway``: the entries that send new blocks to a pool, in begin order (``routes.py``).
        self.routes: list[Any] = []
        # while any entry is there, no cached segment is released to retry an allocation
        self.allocator.capturing = lambda: bool(self.captures or self.routes)
        #: Graph replays launched and not yet run (``in_flight``).
        self.in_flight: list[Any] = []
        self.allocator.settle = functools.partial(in_flight.settle, self)
        #: Ids of the pools graphs make for themselves (``(n, 0)``; ``graph_pool_handle`` gives ``(0, n)``).
        self.graph_pool_ids = itertools.count(1)
        #: Raw blocks by address (``torch.cuda.caching_allocator_alloc``, ``seam.torch_cuda.mempool``): each
        #: storage keeps its memory until deleted, and goes with this runtime when the emulation ends.
        self.raw_blocks: dict[int, torch.UntypedStorage] = {}
        #: ``CUDAGraph.enable_debug_mode()`` was called by some graph (one flag of the device, as in torch).
        self.graphs_debug = False
        #: ``torch.cuda.set_sync_debug_mode``: 0 says nothing, 1 warns, 2 raises on a synchronizing operation.
        self.sync_debug = 0
        #: Whether the device mode checks each operation for a host synchronization: in sync debug mode or while the
        #: GPU trace is on (``sync_debug.py``).
        self.sync_watch = False

    def refuse_recorded(self, pool: tuple[int, int], what: str) -> None:
        """CUDA's allocator refuses to record to ``pool`` while an entry of ``routes`` records to it."""
        if any(route.pool == pool for route in self.routes):
            raise torch_error(ALREADY_RECORDING, f"{what} to pool {pool}, which is already recorded to")

    def refuse_unsafe(self, refusing: list["OpenCapture"], why: str) -> None:
        """CUDA refuses an unsafe call ("operation not permitted when stream is capturing") while ``refusing``
        captures are open, and invalidates them; none, nothing happens."""
        if not refusing:
            return
        for capture in refusing:
            capture.invalidate(why)
        raise cuda_error(NOT_PERMITTED, why)

    # -- streams -------------------------------------------------------------------------------
    def current_stream(self) -> "Stream":
        return self.per_thread.current

    def set_current(self, stream: "Stream | None") -> None:
        per_thread = self.per_thread
        current = stream or self.default_stream
        if current is not per_thread.current:
            _note_switch(per_thread, current)
        per_thread.stream = stream
        per_thread.current = current

    # -- captures ------------------------------------------------------------------------------
    def capture_of(self, stream_id: int) -> "OpenCapture | None":
        """The open capture that ``stream_id``'s work is part of (its origin or a joined fork)."""
        for capture in self.captures:
            if capture.ledger.captures(stream_id):
                return capture
        return None

    def refusing_captures(self) -> list["OpenCapture"]:
        """Open captures whose mode refuses an unsafe call from this thread (global; thread_local here)."""
        me = threading.get_ident()
        return [c for c in self.captures if c.mode == "global" or (c.mode == "thread_local" and c.thread == me)]

    def fire(self, registry: str, *args: Any) -> None:
        """Fire one of ``torch.cuda._gpu_trace``'s callback registries, when tracing is on."""
        if self.gpu_trace:
            from torch.cuda import _gpu_trace  # imported where torch imports it: lazily

            getattr(_gpu_trace, registry).fire_callbacks(*args)


_runtime: Runtime | None = None
#: Makes a fresh runtime's legacy default stream; ``seam.torch_cuda.streams`` registers it as it loads. The
#: runtime knows streams only through it, so the two import one way (streams -> runtime): no circle.
_make_default_stream: Callable[[], Stream] | None = None


def register_default_stream(make: Callable[[], Stream]) -> None:
    """Called once by ``seam.torch_cuda.streams``: how a fresh runtime makes its default stream."""
    global _make_default_stream
    _make_default_stream = make


def runtime() -> Runtime:
    global _runtime
    if _runtime is None:
        _runtime = Runtime()
    return _runtime


def reset() -> Runtime:
    """A fresh runtime (the outermost ``emulate_cuda()`` starts from one)."""
    global _runtime

    # torch's GPU trace, once activated, stays on for the process: a fresh device keeps it on.
    tracing = _runtime is not None and _runtime.gpu_trace
    allocator.allocation_hook = None
    pending.reset()  # no sleep queued, no free held back
    host_cache.reset()  # no pinned block cached
    gc_pace.reset()  # no capture open: the collector's own pace
    _runtime = Runtime()
    if tracing:
        activate_gpu_trace()
    return _runtime


def activate_gpu_trace() -> None:
    """``torch._C._activate_gpu_trace()``: ``torch.cuda._gpu_trace``'s callbacks fire from now on."""

    rt = runtime()
    rt.gpu_trace = True
    rt.sync_watch = True
    allocator.allocation_hook = lambda address: rt.fire("MemoryAllocationCallbacks", address)
    rt.allocator.trace_frees(lambda address: rt.fire("MemoryDeallocationCallbacks", address))
