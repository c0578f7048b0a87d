"""The emulated device's caching allocator: the figures ``torch.cuda`` reports, as CUDA's allocator keeps them.

The memory itself is CPU memory (``kinds.py`` marks it); what this module models is the BOOK-KEEPING of
torch's ``CUDACachingAllocator``, so ``memory_allocated``, ``memory_reserved``, ``memory_stats`` and
``memory_snapshot`` give the H200's numbers (``tests/fidelity/cuda_corpus.py``, class ``allocator``):

- a request is rounded up to a block of 512 bytes; up to 1 MiB it goes to the small pool, else the large;
- a block comes from the smallest free block of the same pool and stream (best fit, lowest address
  first), split when the rest is at least 512 bytes (small pool) or more than 1 MiB (large pool);
- with none, a segment is reserved: 2 MiB (small), 20 MiB (requests under 10 MiB), else the request
  rounded up to 2 MiB;
- a freed block merges with free neighbours of its segment; ``empty_cache`` releases wholly free
  segments;
- while a stream captures, its blocks come from the capture's private pool; that pool's segments are
  released only once no graph uses it (``release_pool``, at a graph's reset or end) and they are free;
- each capture holds two blocks of 8 bytes on its stream in the default pool (CUDA's generator seed
  and offset holders, H200, torch 2.11), freed with the graph;
- under ``set_per_process_memory_fraction`` (``limit``), a new segment that would take what is reserved past
  the limit is refused; outside captures the wholly free cached segments are released first and it is tried
  once more (``num_alloc_retries``); refused, it is ``OverLimit`` (``num_ooms``), which the device says as
  ``torch.OutOfMemoryError`` (``kinds.note_allocation``). With a limit, allocations are played at once, not
  logged, so the refusal comes from the operation that asked.

Cost: the hot path only appends to a log (``note_allocation``); a storage's death appends its weak
reference itself (``kinds._watch`` and the device mode's fast path watch it: the log's own ``append`` is the
callback, so no Python frame runs), and a block is keyed by that reference's ``id`` (``key_of``). The log is
played into the model when a figure is read, or every ``FLUSH_AT`` events: often enough that no single operation
waits long for the play and a run pays it evenly, call by call (what ``bench/bench_torch_cuda.py``'s means
count). A loop's repeats are played once (``allocator_cycles``).
"""

from __future__ import annotations

import collections
import time
import weakref
from typing import Any, Callable, Hashable, Sequence

from seam.torch_cuda import allocator_cycles, memory_frames
from seam.torch_cuda.allocator_events import ALLOC, BEGIN, FREE, RELEASE

K_MIN_BLOCK = 512
K_SMALL_SIZE = 1 << 20
K_SMALL_BUFFER = 2 << 20
K_LARGE_BUFFER = 20 << 20
K_MIN_LARGE_ALLOC = 10 << 20
K_ROUND_LARGE = 2 << 20
DEFAULT_POOL = (0, 0)
#: How many storages ``CachingAllocator.last_at`` keeps per address.
LAST_AT = 8
#: Figures kept per pool type (``all``, ``small_pool``, ``large_pool``), each current/peak/allocated/freed.
ARRAYS = ("allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
          "active_bytes", "inactive_split_bytes", "requested_bytes")
TYPES = ("all", "small_pool", "large_pool")
#: The four fields of each figure, in the order of its list.
FIELDS = ("current", "peak", "allocated", "freed")
FLUSH_AT = 2048
#: A block's frames when none were recorded (one shared empty tuple: the play makes no list per allocation).
NO_FRAMES: tuple[dict[str, Any], ...] = ()
#: Called with the address of every new device allocation while ``torch.cuda._gpu_trace`` is on
#: (its ``MemoryAllocationCallbacks``); ``None`` otherwise, which costs the hot path one test.
allocation_hook: Callable[[int], None] | None = None


def allocation_size(size: int) -> int:
    if size <= K_SMALL_SIZE:
        return K_SMALL_BUFFER
    if size < K_MIN_LARGE_ALLOC:
        return K_LARGE_BUFFER
    return K_ROUND_LARGE * ((size + K_ROUND_LARGE - 1) // K_ROUND_LARGE)


class Block:
    __slots__ = ("address", "size", "requested", "allocated", "stream", "pool", "prev", "next", "owner", "key",
                 "serial", "frames")

    def __init__(self, address: int, size: int, stream: int, pool: "BlockPool") -> None:
        self.address, self.size, self.stream, self.pool = address, size, stream, pool
        self.requested = 0
        self.allocated = False
        self.prev: Block | None = None
        self.next: Block | None = None
        #: A weak reference to the storage the block serves (its ``data_ptr`` is what a snapshot shows).
        self.owner: Any = None
        #: While allocated: the key ``active`` holds it under, and the allocation's number (``CachingAllocator.serial``).
        self.key: Hashable = None
        self.serial = 0
        #: While allocated: the stack frames of its allocation, when the memory history records them.
        self.frames: Sequence[dict[str, Any]] = NO_FRAMES

    def is_split(self) -> bool:
        return self.prev is not None or self.next is not None


class BlockPool:
    """The free blocks of one pool kind (small or large) of the default pools or of a private pool."""

    def __init__(self, small: bool, pool_id: tuple[int, int]) -> None:
        self.small, self.pool_id = small, pool_id
        #: A set: a merge takes a free neighbour out in one step; the order a search or a release walks them in
        #: is torch's own (best fit by size then address; a release by stream, size, address).
        self.free: set[Block] = set()


class PrivatePool:
    def __init__(self, pool_id: tuple[int, int]) -> None:
        self.small, self.large = BlockPool(True, pool_id), BlockPool(False, pool_id)
        self.use_count = 1
        self.segments = 0


class Stats:
    """torch's ``DeviceStats``: per figure and pool type, [current, peak, allocated, freed]."""

    def __init__(self) -> None:
        self.arrays = {name: [[0, 0, 0, 0] for _ in TYPES] for name in ARRAYS}
        self.counters = {"num_alloc_retries": 0, "num_ooms": 0, "num_sync_all_streams": 0,
                         "num_device_alloc": 0, "num_device_free": 0}
        self.oversize = {"oversize_allocations": [0, 0, 0, 0], "oversize_segments": [0, 0, 0, 0]}
        # A block is active exactly while it is allocated here (torch's differ only while a freed block waits
        # for the streams ``record_stream`` named, and the emulated streams have no work pending): one list
        # each, read under both names.
        self.arrays["active"] = self.arrays["allocation"]
        self.arrays["active_bytes"] = self.arrays["allocated_bytes"]
        #: Each figure's list once (``active`` and ``active_bytes`` are the same lists as two others).
        self._lists = list({id(stat): stat for arr in self.arrays.values() for stat in arr}.values())
        #: Indexed by ``small`` (False, True): the six figures every allocation and free moves (``allocate``/
        #: ``release``): allocation, allocated bytes and requested bytes, each for ``all`` and the pool's type.
        self._moved = tuple(tuple(self.arrays[name][t] for name in ("allocation", "allocated_bytes", "requested_bytes")
                                  for t in (0, kind)) for kind in (2, 1))
        #: Indexed the same way: the inactive split blocks and their bytes, for ``all`` and the pool's type (``split``).
        self._splits = tuple((self.arrays["inactive_split"][0], self.arrays["inactive_split"][kind],
                              self.arrays["inactive_split_bytes"][0], self.arrays["inactive_split_bytes"][kind])
                             for kind in (2, 1))

    def allocate(self, small: bool, size: int, requested: int) -> None:
        """A block of ``size`` bytes (``requested`` asked for) handed out: ``up`` for each figure an allocation
        moves (allocation and active, allocated and active bytes, requested bytes). Written out, not looped: the
        log's play runs this for every device allocation of an emulated session."""
        a, b, c, d, e, f = self._moved[small]
        a[0] += 1
        a[2] += 1
        if a[0] > a[1]:
            a[1] = a[0]
        b[0] += 1
        b[2] += 1
        if b[0] > b[1]:
            b[1] = b[0]
        c[0] += size
        c[2] += size
        if c[0] > c[1]:
            c[1] = c[0]
        d[0] += size
        d[2] += size
        if d[0] > d[1]:
            d[1] = d[0]
        e[0] += requested
        e[2] += requested
        if e[0] > e[1]:
            e[1] = e[0]
        f[0] += requested
        f[2] += requested
        if f[0] > f[1]:
            f[1] = f[0]

    def release(self, small: bool, size: int, requested: int) -> None:
        """The same block freed: ``down`` for the same figures, written out as ``allocate`` is."""
        a, b, c, d, e, f = self._moved[small]
        a[0] -= 1
        a[3] += 1
        b[0] -= 1
        b[3] += 1
        c[0] -= size
        c[3] += size
        d[0] -= size
        d[3] += size
        e[0] -= requested
        e[3] += requested
        f[0] -= requested
        f[3] += requested

    def split(self, small: bool, blocks: int, nbytes: int) -> None:
        """The inactive split figures moved by ``blocks`` and ``nbytes`` (each either sign: ``up`` for a rise,
        ``down`` for a fall, as a split or a merge moves them), written out as ``allocate`` is."""
        a, b, c, d = self._splits[small]
        if blocks > 0:
            a[0] += blocks
            a[2] += blocks
            if a[0] > a[1]:
                a[1] = a[0]
            b[0] += blocks
            b[2] += blocks
            if b[0] > b[1]:
                b[1] = b[0]
        elif blocks < 0:
            a[0] += blocks
            a[3] -= blocks
            b[0] += blocks
            b[3] -= blocks
        if nbytes > 0:
            c[0] += nbytes
            c[2] += nbytes
            if c[0] > c[1]:
                c[1] = c[0]
            d[0] += nbytes
            d[2] += nbytes
            if d[0] > d[1]:
                d[1] = d[0]
        elif nbytes < 0:
            c[0] += nbytes
            c[3] -= nbytes
            d[0] += nbytes
            d[3] -= nbytes

    def up(self, name: str, small: bool, amount: int) -> None:
        arr = self.arrays[name]
        for stat in (arr[0], arr[1 if small else 2]):
            stat[0] += amount
            stat[2] += amount
            if stat[0] > stat[1]:
                stat[1] = stat[0]

    def down(self, name: str, small: bool, amount: int) -> None:
        arr = self.arrays[name]
        for stat in (arr[0], arr[1 if small else 2]):
            stat[0] -= amount
            stat[3] += amount

    def nested(self) -> dict[str, Any]:
        """The figures as torch's allocator hands them to Python (``torch._C._cuda_memoryStats``,
        ``_accelerator_getDeviceStats``): counters, then per figure and pool type a dict of the four fields."""
        out: dict[str, Any] = {**self.counters, "max_split_size": -1}
        for name, arr in self.arrays.items():
            out[name] = {kind: dict(zip(FIELDS, stat)) for kind, stat in zip(TYPES, arr)}
        out.update({name: dict(zip(FIELDS, stat)) for name, stat in self.oversize.items()})
        return out

    def flat(self) -> dict[str, int]:
        """``torch.cuda.memory_stats()``: the nested figures' keys joined with dots, sorted."""
        out: dict[str, int] = {}

        def walk(prefix: str, value: Any) -> None:
            if isinstance(value, dict):
                for key, inner in value.items():
                    walk(f"{prefix}.{key}" if prefix else key, inner)
            else:
                out[prefix] = value
        walk("", self.nested())
        return dict(sorted(out.items()))

    def current(self) -> tuple[int, ...]:
        """Every figure's current value, once each (``allocator_cycles`` compares them)."""
        return tuple(stat[0] for stat in self._lists)

    def cumulative(self) -> list[int]:
        """Every figure's allocated and freed counts and every counter, in one flat list (``advance``'s order)."""
        out = [value for stat in self._lists for value in (stat[2], stat[3])]
        out.extend(self.counters.values())
        return out

    def advance(self, before: list[int], after: list[int], times: int) -> None:
        """Move the cumulative figures on by ``times`` the change from ``before`` to ``after`` (``cumulative``'s)."""
        for i, stat in enumerate(self._lists):
            stat[2] += times * (after[2 * i] - before[2 * i])
            stat[3] += times * (after[2 * i + 1] - before[2 * i + 1])
        base = 2 * len(self._lists)
        for i, key in enumerate(self.counters):
            self.counters[key] += times * (after[base + i] - before[base + i])

    def reset_peak(self) -> None:
        for arr in self.arrays.values():
            for stat in arr:
                stat[1] = stat[0]

    def reset_accumulated(self) -> None:
        for arr in self.arrays.values():
            for stat in arr:
                stat[2] = stat[3] = 0
        for key in self.counters:
            self.counters[key] = 0


class OverLimit(Exception):
    """A new segment refused under the memory fraction: its size, and the figures CUDA's refusal names."""

    def __init__(self, tried: int, allowed: int, allocated: int, reserved: int) -> None:
        super().__init__(f"a segment of {tried} bytes would pass the {allowed} bytes allowed")
        self.tried, self.allowed, self.allocated, self.reserved = tried, allowed, allocated, reserved


class CachingAllocator:
    """The book-keeping of one device's ``DeviceCachingAllocator``, fed by an event log."""

    #: The ``before_read`` hook that only a figure read runs: the blocks it frees are the default pool's, which no
    #: capture's allocation (``malloc_now``) can take.
    FIGURES_ONLY = "default-pool blocks only graphs read"

    def __init__(self) -> None:
        self.stats = Stats()
        #: Bytes the allocator may reserve (``set_per_process_memory_fraction``); ``None``: never set.
        self.limit: int | None = None
        #: Whether a pool is recorded to (CUDA's ``captures_underway`` not empty: a capture, a ``use_mem_pool``, an
        #: entry a refused capture end left; ``Runtime`` sets it): no default-pool segment is released then.
        self.capturing: Callable[[], bool] = lambda: False
        self.small, self.large = BlockPool(True, DEFAULT_POOL), BlockPool(False, DEFAULT_POOL)
        self.private: dict[tuple[int, int], PrivatePool] = {}
        self.freeable: set[tuple[int, int]] = set()
        self.segments: list[Block] = []  # the head block of every segment
        self.active: dict[Hashable, Block] = {}
        #: Keys of allocated blocks no storage owns: a CUDA graph tree's checkpoint restored them
        #: (``checkpoints.set_checkpoint_pool_state``); only ``raw_delete`` frees them (``pools.free_graph_held`` and
        #: ``kinds.free_alias_held`` leave them allocated).
        self.ownerless: set[Hashable] = set()
        #: The storages (weak references, the newest last, at most ``LAST_AT``) allocated at each address of a private
        #: pool: the memory there, which a CUDA graph tree reads through a storage it builds from the address after
        #: it freed the block (``addresses.storage_at``; its ``_free_And_Remove_DeleterFn``, then the replay's outputs),
        #: until ``empty_cache`` releases the segment.
        self.last_at: dict[int, list[Any]] = {}
        #: Per such storage's weak reference (by ``id``, with the reference): its last address there, which its
        #: ``data_ptr()`` says once its block is freed (a GPU's pointer stays where it was).
        self.last_address: dict[int, tuple[Any, int]] = {}
        self._next_address = 0x7F0000000000
        self.log: list[tuple] = []
        #: The log's own ``append``, bound once: a watched storage's death calls it with its weak reference
        #: (``kinds._watch``; no Python frame runs).
        self.on_death = self.log.append
        #: Called with a block's address as its storage dies, while torch's GPU trace is on (``trace_frees``).
        self.free_hook: Callable[[int], None] | None = None
        #: How many allocations were played (a block's ``serial`` is the count at its allocation), skipped cycles
        #: included (``allocator_cycles``).
        self.serial = 0
        #: Called before a figure is read, by name: each frees the blocks that only graphs or aliases
        #: still hold (``pools.free_graph_held``, ``kinds.free_alias_held``).
        self.before_read: dict[str, Callable[[], None]] = {}
        #: Runs the graph replays in flight before a figure is read (``in_flight.settle``: the operations they
        #: hold are theirs until they ran).
        self.settle: Callable[[], None] = lambda: None
        #: ``torch.cuda.memory._record_memory_history``'s trace, oldest first (``None``: not recording): what
        #: ``_snapshot()["device_traces"]`` shows (``memory_history.py``).
        self.trace: collections.deque[dict[str, Any]] | None = None
        #: The memory history's context (``"state"``, ``"alloc"``, ``"all"``) while it records stack frames, and
        #: its stacks (``"python"``, ``"all"``): ``memory_frames.py``. ``set_context`` sets them.
        self.context: str | None = None
        self.stacks = "python"
        #: The frames of allocations and frees logged but not played yet, by key.
        self.frames_of: dict[Hashable, list[dict[str, Any]]] = {}
        self.free_frames: dict[Hashable, list[dict[str, Any]]] = {}
        #: ``torch.cuda.caching_allocator_enable``: off, a new allocation bypasses the caching allocator (CUDA's own
        #: ``cudaMalloc``, its free ``cudaFree``: in no figure; its deleter is chosen when it is made).
        self.enabled = True
        #: Whether each new device allocation goes through ``kinds.note_allocation`` (a memory fraction's
        #: refusal, its frames to record, or the caching allocator off), not the device mode's fast path.
        self.one_by_one = False

    def _route(self) -> None:
        self.one_by_one = self.limit is not None or self.context is not None or not self.enabled

    def set_limit(self, limit: int | None) -> None:
        """``set_per_process_memory_fraction``'s bound on what is reserved (None: none)."""
        self.limit = limit
        self._route()

    def set_enabled(self, enabled: bool) -> None:
        """``torch.cuda.caching_allocator_enable``: whether new allocations go through the caching allocator."""
        self.flush()  # what was allocated before it was turned off stays the caching allocator's
        self.enabled = enabled
        self._route()

    def set_context(self, context: str | None, stacks: str) -> None:
        """What the memory history records of each event's stack (``memory_frames.py``)."""
        self.context, self.stacks = context, stacks
        self._route()
        self._pick_on_death()

    def trace_frees(self, hook: Callable[[int], None]) -> None:
        """Call ``hook`` with a device block's address as its storage dies (torch's caching allocator fires the GPU
        trace's deallocation callbacks as it frees a block), for the storages made from now on."""
        self.free_hook = hook
        self._pick_on_death()

    def _pick_on_death(self) -> None:
        # a storage's death records its frames only while frees do, and tells the trace only while it is on (a storage
        # made now keeps this callback)
        traced = self.free_hook is not None
        self.on_death = self._death_traced if traced else (
            self._death_with_frames if self.context == "all" else self.log.append)

    def _death_with_frames(self, ref: Any) -> None:
        if self.context == "all":
            self.free_frames[id(ref)] = memory_frames.gather(self.stacks, "free")
        self.log.append(ref)

    def _death_traced(self, ref: Any) -> None:
        # the allocation was played when the trace heard of it (``kinds.said_address``): its block is known without
        # playing the log here, in a weak reference's callback
        block = self.active.get(id(ref))
        last = self.last_address.get(id(ref)) if block is None else None
        if last is not None and last[0] is not ref:  # an id reused after another block's owner died
            last = None
        self._death_with_frames(ref)
        if self.free_hook is not None and (block is not None or last is not None):
            self.free_hook(block.address if block is not None else last[1])

    # -- the hot path: events -------------------------------------------------------------------------
    def note_allocation(self, key: Hashable, nbytes: int, stream: int, pool: tuple[int, int], owner: Any) -> None:
        self.log.append((ALLOC, key, nbytes, stream, pool, owner))
        if len(self.log) > FLUSH_AT:
            self.flush()

    def note_free(self, key: Hashable) -> None:
        self.log.append((FREE, key))

    def note_pool(self, event: int, pool: tuple[int, int]) -> None:
        self.log.append((event, pool))

    def begin_pool(self, pool: tuple[int, int]) -> None:
        self.note_pool(BEGIN, pool)

    def release_pool(self, pool: tuple[int, int]) -> None:
        self.note_pool(RELEASE, pool)

    def flush(self) -> None:
        # In place, and only what was there: the weak references' callbacks append to this very list, and
        # the copy's allocation may run the collector, whose callbacks append behind the first ``count``.
        count = len(self.log)
        log = self.log[:count]
        del self.log[:count]
        if count >= allocator_cycles.MIN_WINDOW and self.trace is None and self.limit is None:
            allocator_cycles.play(self, log)  # whole repeats of one cycle played once
        else:
            self.play(log)

    def play(self, log: list[Any]) -> None:
        """Play ``log``'s events into the model, one by one."""
        pop, free, malloc, last_address = self.active.pop, self._free, self._malloc, self.last_address
        for event in log:
            if type(event) is not tuple:  # a watched storage died: its weak reference (``kinds._allocated``)
                if last_address:
                    last_address.pop(id(event), None)
                block = pop(id(event), None)
                if block is not None:
                    free(block)
                elif self.free_frames:  # its frames go with it: a later reference of its id must not take them
                    self.free_frames.pop(id(event), None)
                continue
            kind = event[0]
            if kind == ALLOC:
                malloc(event[1], event[2], event[3], event[4], event[5])
            elif kind == FREE:
                block = pop(event[1], None)
                if block is not None:
                    free(block)
            elif kind == BEGIN:
                if event[1] in self.private:
                    self.private[event[1]].use_count += 1
                else:
                    self.private[event[1]] = PrivatePool(event[1])
            elif kind == RELEASE:
                pool = self.private.get(event[1])
                if pool is not None:
                    pool.use_count -= 1
                    if pool.use_count <= 0:
                        self.freeable.add(event[1])

    def record(self, action: str, address: int, size: int, stream: int,
               frames: Sequence[dict[str, Any]] = NO_FRAMES) -> None:
        """One entry of the memory history (the H200's keys; ``frames`` only where the entry carries a context, under
        a context that traces them: ``memory_frames.TRACES``). Only while it is recorded: the callers check
        ``self.trace is not None`` (the model's hot paths skip the call when it is not)."""
        entry: dict[str, Any] = {"action": action, "addr": address, "size": size, "stream": stream,
                                 "time_us": time.time_ns() // 1000}
        if frames and self.context in memory_frames.TRACES:  # an entry with no context has no frames key (H100)
            entry["frames"] = list(frames)
        entry["compile_context"] = entry["user_metadata"] = ""
        self.trace.append(entry)  # type: ignore[union-attr]

    def read(self, *, figures: bool = True) -> "CachingAllocator":
        """The model with every event so far played, and every block only graphs hold freed (with
        ``figures=False``: not the hook named ``FIGURES_ONLY``, whose blocks an allocation cannot take)."""
        self.settle()
        self.flush()
        for name, hook in list(self.before_read.items()):
            if figures or name != self.FIGURES_ONLY:
                hook()
        return self

    def block_at(self, address: int) -> Block | None:
        """The allocated block that starts at ``address`` (the model's address), if any; the log is not played."""
        return next((block for block in self.active.values() if block.address == address), None)

    def free_held(self, key: Hashable) -> None:
        """Free ``key``'s block at once, if it is allocated (a ``before_read`` hook's call: the log was just
        played)."""
        block = self.active.pop(key, None)
        if block is not None:
            self._free(block)

    def malloc_now(self, key: Hashable, nbytes: int, stream: int, pool: tuple[int, int], owner: Any, *,
                   played: bool = False) -> None:
        """Allocate at once: in a capture, after every block only graphs hold is freed (``played``: the caller
        just read the model so, and asked ``where`` the block goes)."""
        if not played:
            self.read(figures=False)
        self._malloc(key, nbytes, stream, pool, owner)

    # -- the model --------------------------------------------------------------------------------------
    def _pool_for(self, size: int, pool_id: tuple[int, int]) -> BlockPool:
        if pool_id != DEFAULT_POOL:
            private = self.private.get(pool_id)
            if private is None:
                private = self.private[pool_id] = PrivatePool(pool_id)
            return private.small if size <= K_SMALL_SIZE else private.large
        return self.small if size <= K_SMALL_SIZE else self.large

    def _malloc(self, key: Hashable, nbytes: int, stream: int, pool_id: tuple[int, int], owner: Any) -> None:
        self.serial += 1
        frames = self.frames_of.pop(key, NO_FRAMES) if self.frames_of else NO_FRAMES
        if nbytes <= 0:
            return
        if key in self.active:  # a block that only graphs held, taken again
            self._free(self.active.pop(key))
        # torch's round_size: at least one block of 512 bytes, else up to a multiple of 512
        size = K_MIN_BLOCK if nbytes < K_MIN_BLOCK else (nbytes + K_MIN_BLOCK - 1) & -K_MIN_BLOCK
        pool = (self.small if size <= K_SMALL_SIZE else self.large) if pool_id == DEFAULT_POOL else \
            self._pool_for(size, pool_id)
        block = _best_fit(pool, size, stream)
        if block is not None:
            pool.free.remove(block)
        else:
            segment = allocation_size(size)
            if self.limit is not None:
                self._make_room(segment)
                pool = self._pool_for(size, pool_id)  # releasing may have dropped a private pool
            block = self._new_segment(pool, segment, stream, frames)
        self._take(block, size, key, nbytes, owner, frames)

    def _take(self, block: Block, size: int, key: Hashable, nbytes: int, owner: Any,
              frames: Sequence[dict[str, Any]]) -> None:
        """Allocate the first ``size`` bytes of the free ``block`` (out of its pool's free set already) to ``key``:
        the rest split off as a free block when it is big enough (torch's ``should_split``)."""
        stats, pool, stream = self.stats, block.pool, block.stream
        already_split = block.prev is not None or block.next is not None
        remaining = block.size - size
        split = remaining >= K_MIN_BLOCK if pool.small else remaining > K_SMALL_SIZE
        if split:
            rest = Block(block.address + size, remaining, stream, pool)
            rest.requested = block.requested
            rest.prev, rest.next = block, block.next
            if block.next is not None:
                block.next.prev = rest
            block.next = rest
            block.size = size
            pool.free.add(rest)
            if already_split:
                stats.split(pool.small, 0, -size)
            else:
                stats.split(pool.small, 1, remaining)
        elif already_split:
            stats.split(pool.small, -1, -block.size)
        block.allocated = True
        block.requested = nbytes
        block.owner = owner
        block.key = key
        block.serial = self.serial
        block.frames = frames
        self.active[key] = block
        if pool.pool_id != DEFAULT_POOL:  # (tested here too: the default pool's allocations skip the call)
            self.placed(block)
        stats.allocate(pool.small, block.size, nbytes)
        if self.trace is not None:
            self.record("alloc", block.address, nbytes, stream, frames)

    def where(self, nbytes: int, stream: int, pool_id: tuple[int, int]) -> int | None:
        """The address an allocation of ``nbytes`` on ``stream`` in ``pool_id`` would take now (None: a new
        segment's); the log is not played."""
        size = K_MIN_BLOCK if nbytes < K_MIN_BLOCK else (nbytes + K_MIN_BLOCK - 1) & -K_MIN_BLOCK
        block = _best_fit(self._pool_for(size, pool_id), size, stream)
        return None if block is None else block.address

    def placed(self, block: Block) -> None:
        """``block`` now serves ``block.owner``: in a private pool, the memory at its address (``last_at``)."""
        owner = block.owner
        if block.pool.pool_id != DEFAULT_POOL and owner is not None:
            there = self.last_at.setdefault(block.address, [])
            if owner in there:
                there.remove(owner)
            there.append(owner)
            del there[:-LAST_AT]
            self.last_address[id(owner)] = (owner, block.address)

    def storages_at(self, address: int) -> list[Any]:
        """The live storages whose last place is ``address`` of a private pool, the newest first (``last_at``)."""
        refs = reversed(self.last_at.get(address, ()))
        return [s for ref in refs if self.last_address.get(id(ref), (None, None))[1] == address
                for s in (ref(),) if s is not None]

    def allocate_at(self, key: Hashable, address: int, size: int, nbytes: int, small: bool, pool_id: tuple[int, int],
                    owner: Any) -> None:
        """CUDA's ``setSegmentStateToCheckpoint`` for one block of a private pool: the ``size`` bytes at ``address``
        allocated to ``key`` again, carved out of the free block that holds them (its head and tail stay free)."""
        private = self.private.get(pool_id)
        pool = None if private is None else (private.small if small else private.large)
        found = None if pool is None else next(
            (b for b in pool.free if b.address <= address and address + size <= b.address + b.size), None)
        if found is None:
            raise RuntimeError(f"setCheckpointPoolState: pool {pool_id} has no free block that holds the checkpoint's "
                               f"block at {address:#x} ({size} bytes): its segment was released since")
        self.serial += 1
        pool.free.remove(found)
        block = found
        if found.address < address:  # the head stays free, split off: both now count as inactive splits
            was_split = found.is_split()
            block = Block(address, found.address + found.size - address, found.stream, pool)
            block.prev, block.next = found, found.next
            if found.next is not None:
                found.next.prev = block
            found.next = block
            self.stats.split(pool.small, 2 - was_split, 0 if was_split else found.size)
            found.size = address - found.address
            pool.free.add(found)
        self._take(block, size, key, nbytes, owner, NO_FRAMES)

    def _make_room(self, segment: int) -> None:
        """Room under ``limit`` for a new segment: there already, or after the cached segments are released when
        no capture is under way (CUDA's ``release_cached_blocks``, then its retry); else ``OverLimit``."""
        assert self.limit is not None
        reserved = self.stats.arrays["reserved_bytes"][0]
        if reserved[0] + segment <= self.limit:
            return
        if not self.capturing():
            self.release_cached()
            self.stats.counters["num_alloc_retries"] += 1
            if reserved[0] + segment <= self.limit:
                return
        self.stats.counters["num_ooms"] += 1
        raise OverLimit(segment, self.limit, self.stats.arrays["allocated_bytes"][0][0], reserved[0])

    def _new_segment(self, pool: BlockPool, size: int, stream: int, frames: Sequence[dict[str, Any]]) -> Block:
        block = Block(self._next_address, size, stream, pool)
        self._next_address += size + K_SMALL_BUFFER
        self.segments.append(block)
        self.stats.up("segment", pool.small, 1)
        self.stats.up("reserved_bytes", pool.small, size)
        self.stats.counters["num_device_alloc"] += 1
        if pool.pool_id != DEFAULT_POOL:
            self.private[pool.pool_id].segments += 1
        if self.trace is not None:
            self.record("segment_alloc", block.address, size, stream, frames)
        return block

    def _free(self, block: Block) -> None:
        stats, pool = self.stats, block.pool
        if self.trace is not None:  # (free frames are gathered only while a trace is kept: ``set_context``)
            frames = (self.free_frames.pop(block.key, None) if self.free_frames else None) or block.frames
            self.record("free_requested", block.address, block.requested, block.stream, frames)
            self.record("free_completed", block.address, block.requested, block.stream, frames)
        block.allocated = False
        if self.ownerless:
            self.ownerless.discard(block.key)
        block.owner = block.key = None
        block.frames = NO_FRAMES
        size, requested = block.size, block.requested
        stats.release(pool.small, size, requested)
        # Merged with its free neighbours (each a split block that leaves the inactive-split figures): the next
        # into this block, this block into the previous, which keeps its place (a segment's head stays its head).
        splits, split_bytes = 0, 0
        after = block.next
        if after is not None and not after.allocated:
            pool.free.remove(after)
            block.next = after.next
            if after.next is not None:
                after.next.prev = block
            block.size += after.size
            splits -= 1
            split_bytes -= after.size
        before = block.prev
        if before is not None and not before.allocated:
            splits -= 1
            split_bytes -= before.size
            before.size += block.size
            before.requested = block.requested  # torch merges into the freed block, which keeps its request
            before.next = block.next
            if block.next is not None:
                block.next.prev = before
            block = before  # already among the free blocks
        else:
            pool.free.add(block)
        if block.prev is not None or block.next is not None:
            splits += 1
            split_bytes += block.size
        if splits or split_bytes:
            stats.split(pool.small, splits, split_bytes)

    def empty_cache(self) -> None:
        self.read()
        self.release_cached()

    def frees_a_private_segment(self) -> bool:
        """Whether ``release_cached`` would give a segment of a private pool back to CUDA (``cudaFree``): a wholly
        free segment of a pool no graph uses any more."""
        return any(not block.is_split() for pool_id in self.freeable
                   for pool in (self.private[pool_id].small, self.private[pool_id].large) for block in pool.free)

    def release_cached(self) -> None:
        """CUDA's ``release_cached_blocks``: every wholly free segment of the private pools no graph uses any more,
        and of the default pools unless a pool is recorded to (its ``captures_underway`` not empty: a capture, a
        ``use_mem_pool``, an entry a refused capture end left: ``routes.py``)."""
        if not self.capturing():
            self.stats.counters["num_sync_all_streams"] += 1
            for pool in (self.large, self.small):
                self._release_free_segments(pool)
        for pool_id in sorted(self.freeable):
            private = self.private[pool_id]
            self._release_free_segments(private.small)
            self._release_free_segments(private.large)
            if private.segments == 0:
                del self.private[pool_id]
                self.freeable.discard(pool_id)

    def _release_free_segments(self, pool: BlockPool) -> None:
        # a ``segment_free`` entry carries no frames: torch 2.11 on the H100 gathers none for it (PyTorch's
        # test_memory_plots_free_segment_stack fails there: no ``empty_cache`` frame under context "all")
        # torch walks a pool's free blocks in its set's order (``BlockComparatorSize``: stream, size, address)
        for block in sorted((b for b in pool.free if not b.is_split()), key=lambda b: (b.stream, b.size, b.address)):
            pool.free.remove(block)
            self.segments.remove(block)
            self.stats.down("segment", pool.small, 1)
            self.stats.down("reserved_bytes", pool.small, block.size)
            self.stats.counters["num_device_free"] += 1
            if pool.pool_id != DEFAULT_POOL:
                self.private[pool.pool_id].segments -= 1
                for address in [a for a in self.last_at if block.address <= a < block.address + block.size]:
                    del self.last_at[address]  # no memory there any more (addresses are never given twice)
            if self.trace is not None:
                self.record("segment_free", block.address, block.size, block.stream)

    def snapshot(self) -> list[dict[str, Any]]:
        self.read()
        out = []
        for head in sorted(self.segments, key=lambda b: b.address):
            blocks, block = [], head
            while block is not None:
                blocks.append({"address": block.address, "size": block.size, "requested_size": block.requested,
                               "state": "active_allocated" if block.allocated else "inactive",
                               "frames": list(block.frames)})
                block = block.next
            active = [b for b in blocks if b["state"] == "active_allocated"]
            out.append({"device": 0, "address": head.address, "total_size": sum(b["size"] for b in blocks),
                        "allocated_size": sum(b["size"] for b in active), "active_size": sum(b["size"] for b in active),
                        "requested_size": sum(b["requested_size"] for b in active), "stream": head.stream,
                        "segment_type": "small" if head.pool.small else "large",
                        "segment_pool_id": head.pool.pool_id, "is_expandable": False, "frames": [], "blocks": blocks})
        return out


def _best_fit(pool: BlockPool, size: int, stream: int) -> Block | None:
    """The free block of ``pool`` an allocation of ``size`` bytes on ``stream`` takes, as torch's
    ``BlockComparatorSize`` orders a pool: the smallest that holds ``size``, the lowest address among equals."""
    block = None
    best_size = 0
    for candidate in pool.free:
        candidate_size = candidate.size
        if candidate_size >= size and candidate.stream == stream and (block is None or candidate_size < best_size or (
                candidate_size == best_size and candidate.address < block.address)):
            block, best_size = candidate, candidate_size
    return block


def key_of(ref: weakref.ref) -> int:
    """The model's key of the block a watched storage holds: its weak reference's ``id`` (the reference lives
    as long as the block is allocated: the block's ``owner`` holds it, and the log holds it once it died)."""
    return id(ref)
