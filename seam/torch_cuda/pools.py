"""Graph memory pools: memory a capture makes is served from its pool, and reused as CUDA reuses it.

CUDA's caching allocator gives each capture a private pool (or the pool it was handed): a buffer
born in the capture lives in that pool, and once nothing but graphs refers to it (the Python
tensor was dropped), a later allocation of the same size in a capture of the SAME pool takes that
block. Replaying the earlier graph then overwrites the later graph's buffer: the hazard that sharing
a pool across graphs carries (H200: ``a_later_graph_in_a_shared_pool_takes_an_earlier_graphs_freed_intermediate``).

A block is free when its storage's use count is the pool's own reference plus the references the
graphs' recorded operations hold (counted as they are recorded), plus the capture's own hold on a
buffer born in it, plus its aliases' (``kinds.alias``: on a GPU an alias holds nothing); the allocator
model then frees it (``free_graph_held``). Which block a new buffer takes is the model's choice (CUDA's best
fit): the buffer is served from the storage last allocated at that address, if the model holds it free and it
is of the buffer's size class (CUDA's 512-byte rounding) and holds it, else it is a new block. So a storage lies
at one address of the model, and two graphs write one memory exactly where a GPU's write one address (a CUDA
graph tree's nodes, since session 30; before, a free storage elsewhere was taken, and a tree's replay read
another node's output).
"""

from __future__ import annotations

import collections
import weakref
from typing import Any, Callable

import torch

from seam.op_args import tensors
from seam.torch_cuda import graph_trees, routes
from seam.torch_cuda.allocator import key_of
from seam.torch_cuda.kinds import alias_refs, block_ref, model_key, note_allocation
from seam.torch_cuda.runtime import runtime

_use_count: Callable[[Any], int] = torch._C._storage_Use_Count
_ROUND = 512


def _size_class(nbytes: int) -> int:
    return max(1, (nbytes + _ROUND - 1) // _ROUND)


class Holds(collections.Counter):  # type: ignore[type-arg]
    """The storage references a graph's recorded operations hold, by storage id, and a weak reference to each
    storage (the held memory's owner, looked at when the figures are read: ``free_graph_held``)."""

    def __init__(self) -> None:
        super().__init__()
        self.storages: dict[int, weakref.ref[torch.UntypedStorage]] = {}

    def add(self, items: Any) -> None:
        """Count the references the tensors among ``items`` (any nesting) hold: one a tensor, however often named."""
        seen: set[int] = set()
        for leaf in tensors(items):
            if id(leaf) not in seen:
                seen.add(id(leaf))
                storage = leaf.untyped_storage()
                key = id(storage)
                self[key] += 1
                if key not in self.storages:
                    self.storages[key] = weakref.ref(storage)


class CountingOps(list):  # type: ignore[type-arg]
    """A capture's recorded operations, counting the storage references each one holds."""

    def __init__(self) -> None:
        super().__init__()
        self.refs = Holds()

    def append(self, op: Any) -> None:
        self.refs.add((op.args, op.kwargs, op.outputs))
        super().append(op)


class Pool:
    """One memory pool: its blocks, and the graph references held on them."""

    def __init__(self) -> None:
        self.blocks: list[torch.UntypedStorage] = []
        self._ids: set[int] = set()
        #: Per graph (by id): the storage references its recorded operations hold.
        self.graph_refs: dict[int, Holds] = {}

    def _held(self, key: int, born: dict[int, Any]) -> int:
        return 1 + graphs_hold(key) + (1 if key in born else 0) + alias_refs(key)

    def place(self, t: torch.Tensor, keep: Callable[[torch.UntypedStorage], None]) -> None:
        """Serve the memory of ``t`` (just made in a capture of this pool) from the storage last at the address the
        allocator model gives it (the memory a GPU has there), else keep its storage as a new block: a storage lies
        at one address, so every graph that wrote it writes where a GPU's graph writes. ``keep`` is told of a block
        served again before ``t``'s capture-time value is written into it (the capture gives back what it held)."""
        own = t.untyped_storage()
        need = own.nbytes()
        rt = runtime()
        block = self._at_the_models_address(rt, own, need)
        if block is None:
            if id(own) not in self._ids:
                self._ids.add(id(own))
                self.blocks.append(own)
            return
        keep(block)
        ref = block_ref(block)
        note_allocation(rt, key_of(ref), need, ref, played=True)  # where _at_the_models_address just asked
        flat = torch.empty(0, dtype=torch.uint8)
        flat.set_(block, 0, (need,), (1,)).copy_(torch.empty(0, dtype=torch.uint8).set_(own, 0, (need,), (1,)))
        graph_trees.unmark(block)
        t.set_(block, t.storage_offset(), t.size(), t.stride())

    def _fits(self, block: torch.UntypedStorage, own: torch.UntypedStorage, need: int) -> bool:
        return block is not own and _size_class(block.nbytes()) == _size_class(need) and block.nbytes() >= need

    def _at_the_models_address(self, rt: Any, own: torch.UntypedStorage, need: int) -> torch.UntypedStorage | None:
        """The block of this pool last allocated at the address the model gives ``need`` bytes now, if the model
        holds it free and it fits: whoever still refers to it (an output a CUDA graph tree freed, a graph), a GPU
        writes there (``checkpoints.py``)."""
        alloc = rt.allocator.read(figures=False)
        stream = rt.current_stream()
        address = alloc.where(need, stream.cuda_stream, routes.pool_for(rt, stream))
        for block in () if address is None else alloc.storages_at(address):
            if id(block) in self._ids and self._fits(block, own, need) and key_of(block_ref(block)) not in alloc.active:
                return block
        return None

    def forget(self, graph_key: int) -> None:
        self.graph_refs.pop(graph_key, None)


def _all_holds(rt: Any) -> list[Holds]:
    """What every graph holds, ended or being captured, whatever pool it allocates from."""
    return [refs for pool in rt.pools.values() for refs in pool.graph_refs.values()] + [
        capture.ops.refs for capture in rt.captures]


def graphs_hold(key: int) -> int:
    """The references on storage ``key`` that graphs hold: the recorded operations of EVERY graph, ended or
    being captured, whatever pool it allocates from (a GPU's graph holds no memory: a block another graph only
    reads is freed when its last tensor dies; H200, session 14: ``two_successive``)."""
    return sum(refs.get(key, 0) for refs in _all_holds(runtime()))


def free_graph_held(rt: Any) -> None:
    """Free, in the allocator model, every pool block that nothing but graphs (and the pool) holds:
    on a GPU its block went back to the pool when the last tensor on it died."""
    active, ownerless = rt.allocator.active, rt.allocator.ownerless
    for pool in rt.pools.values():
        born = _born_in(rt, pool)
        for storage in pool.blocks:
            key = model_key(storage)
            if key in active and key not in ownerless and _use_count(storage._cdata) == pool._held(id(storage), born):
                rt.allocator.free_held(key)


def gpu_use_count(cdata: int) -> int:
    """``torch._C._storage_Use_Count`` as a GPU counts: a pool block's references held by the pool, by graphs, by the
    capture it was born in and by its aliases are the emulator's own (a GPU's graph holds no memory), so they do not
    count. A CUDA graph tree asks it whether an output it holds only weakly still lives
    (``StorageWeakRefWrapper.expired``): torch's own count said yes where only graphs held the block, which the
    allocator model had freed, and the tree's pool check (``slow_path_cudagraph_asserts``) refused the next recording
    ("These storage data ptrs are not allocated in pool ... but should be"). A storage of no pool that graphs hold
    (the tree's copy of an input that only a recorded graph reads, a training step's saved input) counts dead once
    the model holds no block at its address (read by the storage's own key instead, two graph-tree tests failed:
    the model held a block at that address under another key, and the tree counted it dead; session 33)."""
    count = _use_count(cdata)
    rt = runtime()
    for pool in rt.pools.values():
        for storage in pool.blocks:
            if storage._cdata == cdata:
                return max(0, count - pool._held(id(storage), _born_in(rt, pool)))
    storage = _held_by_graphs(rt, cdata)
    if storage is None:
        return count
    # a storage of no pool that graphs hold (a warm-up's copy of an input that a recorded graph reads): dead once the
    # model holds no block at its address (``free_default_pool_held`` freed it), whatever took a reference to it since
    return count if rt.allocator.read().block_at(storage.data_ptr()) is not None else 0


def _held_by_graphs(rt: Any, cdata: int) -> torch.UntypedStorage | None:
    """The live storage ``cdata`` when a graph holds it, else None."""
    for refs in _all_holds(rt):
        for ref in refs.storages.values():
            storage = ref()
            if storage is not None and storage._cdata == cdata:
                return storage
    return None


def _freed_when_read(rt: Any, sid: int, storage: torch.UntypedStorage, graph_refs: int, in_pools: set[int]) -> bool:
    """Whether the model frees ``storage``'s block (of no pool) when read: it is allocated, owned by its storage, and
    nothing but graphs (``graph_refs`` of them), its aliases and its Python object hold it."""
    key = model_key(storage)
    # 1: the Python object of the storage (``storage`` here), as ``Pool._held`` counts the pool's
    return (key in rt.allocator.active and sid not in in_pools and key not in rt.allocator.ownerless
            and _use_count(storage._cdata) == 1 + graph_refs + alias_refs(sid))


def _born_in(rt: Any, pool: Pool) -> dict[int, Any]:
    """The buffers born in the open capture of ``pool`` (none when none is open)."""
    capture = next((c for c in rt.captures if c.pool is pool), None)
    return capture.recorder._born if capture is not None else {}


def only_graphs_hold(rt: Any, storage: torch.UntypedStorage) -> bool:
    """Whether nothing but the pool, graphs and aliases holds the pool block ``storage`` (free on a GPU, unless a
    CUDA graph tree's checkpoint says otherwise: ``checkpoints.py``); a storage of no pool: whether only aliases do."""
    for pool in rt.pools.values():
        if id(storage) in pool._ids:
            return bool(_use_count(storage._cdata) == pool._held(id(storage), _born_in(rt, pool)))
    return bool(_use_count(storage._cdata) == 1 + alias_refs(id(storage)))


def free_default_pool_held(rt: Any) -> None:
    """Free, in the allocator model, every block made outside any capture (the default pool's, or a private pool's
    through ``use_mem_pool`` or a CUDA graph tree's warm-up and input copies: no ``Pool`` holds it) that nothing but
    graphs and aliases hold: the caching allocator frees it when its last tensor dies, whichever live graph still
    reads it. A figures-only hook (``CachingAllocator.FIGURES_ONLY``), so ``malloc_now`` does not pay for it."""
    holds = _all_holds(rt)
    if not holds:
        return
    in_pools = set().union(*(pool._ids for pool in rt.pools.values()))
    total: collections.Counter[int] = collections.Counter()
    for refs in holds:
        total.update(refs)
    for refs in holds:
        for sid, ref in refs.storages.items():
            storage = ref()
            if storage is not None and _freed_when_read(rt, sid, storage, total[sid], in_pools):
                rt.allocator.free_held(model_key(storage))
