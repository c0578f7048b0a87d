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
from typing import Any, Callable

import torch
from torch.utils._pytree import tree_leaves

from seam.torch_cuda.allocator import key_of
from seam.torch_cuda.kinds import alias_refs, block_ref, model_key, note_allocation
from seam.torch_cuda.runtime import runtime

_use_count: Callable[[Any], int] = torch._C._storage_Use_Count
_ROUND = 512


def _size_class(nbytes: int) -> int:
    return max(1, (nbytes + _ROUND - 1) // _ROUND)


def storage_refs(items: Any) -> collections.Counter[int]:
    """How many tensors among ``items`` (any nesting) refer to each storage, by storage id."""
    refs: collections.Counter[int] = collections.Counter()
    seen: set[int] = set()
    for leaf in tree_leaves(items):
        if isinstance(leaf, torch.Tensor) and id(leaf) not in seen:  # one tensor named twice holds one reference
            seen.add(id(leaf))
            refs[id(leaf.untyped_storage())] += 1
    return refs


class CountingOps(list):  # type: ignore[type-arg]
    """A capture's recorded operations, counting the storage references each one holds."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: collections.Counter[int] = collections.Counter()

    def append(self, op: Any) -> None:
        self.refs.update(storage_refs((op.args, op.kwargs, op.outputs)))
        super().append(op)


class Pool:
    """One memory pool: its blocks, and the graph references held on them."""

    def __init__(self) -> None:
        self.blocks: list[torch.UntypedStorage] = []
        self._ids: set[int] = set()
        #: Per graph (by id): the storage references its recorded operations hold.
        self.graph_refs: dict[int, collections.Counter[int]] = {}

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
            t.set_(block, t.storage_offset(), t.size(), t.stride())
            return
        if id(own) not in self._ids:
            self._ids.add(id(own))
            self.blocks.append(own)

    def forget(self, graph_key: int) -> None:
        self.graph_refs.pop(graph_key, None)


def graphs_hold(key: int) -> int:
    """The references on storage ``key`` that graphs hold: the recorded operations of EVERY graph, ended or
    being captured, whatever pool it allocates from (a GPU's graph holds no memory: a block another graph only
    reads is freed when its last tensor dies; H200, session 14: ``two_successive``)."""
    rt = runtime()
    held = sum(refs.get(key, 0) for pool in rt.pools.values() for refs in pool.graph_refs.values())
    return held + sum(capture.ops.refs.get(key, 0) for capture in rt.captures)


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
