"""Graph memory pools: memory a capture makes is served from its pool, and reused as CUDA reuses it.

CUDA's caching allocator gives each capture a private pool (or the pool it was handed): a buffer
born in the capture lives in that pool, and once nothing but graphs refers to it (the Python
tensor was dropped), a later allocation of the same size in a capture of the SAME pool takes that
block. Replaying the earlier graph then overwrites the later graph's buffer: the hazard that sharing
a pool across graphs carries (H200: ``a_later_graph_in_a_shared_pool_takes_an_earlier_graphs_freed_intermediate``).

A block is free when its storage's use count is the pool's own reference plus the references the
graphs' recorded operations hold (counted as they are recorded), plus the capture's own hold on a
buffer born in it, plus its aliases' (``kinds.alias``: on a GPU an alias holds nothing). Size classes
are CUDA's 512-byte rounding; a block is reused only by an allocation of its size class.
"""

from __future__ import annotations

import collections
import weakref
from typing import Any, Callable

import torch
from torch.utils._pytree import tree_leaves

from seam.torch_cuda import graph_trees
from seam.torch_cuda.allocator import DEFAULT_POOL, key_of
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
        for leaf in tree_leaves(items):
            if isinstance(leaf, torch.Tensor) and id(leaf) not in seen:
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

    def place(self, t: torch.Tensor, born: dict[int, Any]) -> None:
        """Serve the memory of ``t`` (just made in a capture of this pool) from a free block, or keep
        its storage as a new block."""
        own = t.untyped_storage()
        need = own.nbytes()
        for block in self.blocks:
            key = id(block)
            if block is own or _size_class(block.nbytes()) != _size_class(need) or block.nbytes() < need:
                continue
            if _use_count(block._cdata) != self._held(key, born):
                continue
            ref = block_ref(block)
            note_allocation(runtime(), key_of(ref), need, ref)
            flat = torch.empty(0, dtype=torch.uint8)
            flat.set_(block, 0, (need,), (1,)).copy_(torch.empty(0, dtype=torch.uint8).set_(own, 0, (need,), (1,)))
            graph_trees.unmark(block)
            t.set_(block, t.storage_offset(), t.size(), t.stride())
            return
        if id(own) not in self._ids:
            self._ids.add(id(own))
            self.blocks.append(own)

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
    active = rt.allocator.active
    for pool in rt.pools.values():
        capture = next((c for c in rt.captures if c.pool is pool), None)
        born = capture.recorder._born if capture is not None else {}
        for storage in pool.blocks:
            key = model_key(storage)
            if key in active and _use_count(storage._cdata) == pool._held(id(storage), born):
                rt.allocator.free_held(key)


def free_default_pool_held(rt: Any) -> None:
    """Free, in the allocator model, every DEFAULT-pool block (made outside any capture) that nothing but graphs
    holds: the caching allocator frees it when its last tensor dies, whichever live graph still reads it. A
    figures-only hook (``CachingAllocator.FIGURES_ONLY``): a capture's allocation never takes a default-pool block,
    so ``malloc_now`` does not pay for it."""
    holds = _all_holds(rt)
    if not holds:
        return
    active = rt.allocator.active
    total: collections.Counter[int] = collections.Counter()
    for refs in holds:
        total.update(refs)
    for refs in holds:
        for sid, ref in refs.storages.items():
            storage = ref()
            key = None if storage is None else model_key(storage)
            block = active.get(key)
            # 1: the Python object of the storage (``storage`` here), as ``Pool._held`` counts the pool's
            if (block is not None and block.pool.pool_id == DEFAULT_POOL
                    and _use_count(storage._cdata) == 1 + total[sid] + alias_refs(sid)):
                rt.allocator.free_held(key)
