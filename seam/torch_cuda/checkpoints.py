"""A CUDA graph tree's checkpoints of its private pool, on the emulated device's caching-allocator model.

CUDA graph trees (``torch._inductor.cudagraph_trees``) record a node's graph into the tree's pool, then keep the
caching allocator's state of that pool (``torch._C._cuda_getCheckpointState``). Before a node records a second
child, the tree puts the pool back as it was after the node (``_cuda_setCheckpointPoolState``), gives the storages
of the outputs that still live a deleter again, and frees the blocks of those that died since with
``_cuda_cudaCachingAllocator_raw_delete``; when a new generation starts, it frees its live outputs' blocks at once
(``_free_And_Remove_DeleterFn``). PyTorch's ``TestBlockStateAbsorption`` calls the same functions directly.

Here, as CUDA's allocator does (c10/cuda/CUDACachingAllocator.cpp and the binding in torch/csrc/cuda/Module.cpp):

- a checkpoint is the pool's allocated blocks: address, size, request, and the storage that served each;
- restoring one frees every block of the pool allocated now, then allocates each checkpointed block at its address
  again (``CachingAllocator.allocate_at``), so the segments are as they were. A block freed now that the checkpoint
  does not allocate again must belong to a storage passed as stale, whose later death frees nothing; else the call
  is refused in torch's words ("Any stale tensors which are being manually freed must be passed to set
  checkpoint"), the pool left wholly free, as the H100 leaves it;
- each restored block is owned by the storage over it that is given a deleter (or that a tensor still owns);
  the others are owned by no storage (``CachingAllocator.ownerless``) and stay allocated until ``raw_delete``
  frees them (``mempool.raw_delete``), as PyTorch's ``test_tensor_dies_after_checkpoint`` counts;
- ``_free_And_Remove_DeleterFn(storage)`` frees the storage's block now; the storage keeps reading its memory (the
  tree marks it: ``graph_trees.py``) and its death frees nothing more.

The pool's CPU memory is ``pools.py``'s: a recording takes the storage last at the address the model gives it, and
a storage nothing but the pool, graphs and aliases holds is freed in the model (``pools.free_graph_held``), which
leaves a block owned by no storage allocated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch

from seam.torch_cuda import kinds, pools
from seam.torch_cuda.allocator import key_of
from seam.torch_cuda.runtime import runtime

_real_ptr = torch._C.StorageBase.data_ptr
STALE = "Any stale tensors which are being manually freed must be passed to set checkpoint"


@dataclass(frozen=True)
class Checkpointed:
    """One allocated block of a checkpoint: where it is, and the weak reference to the storage that served it, or
    None (held here, so the key ``allocator.key_of(owner)`` a restore allocates it under is the storage's still)."""

    address: int
    size: int
    requested: int
    small: bool
    owner: Any


@dataclass(frozen=True)
class Checkpoint:
    """``torch._C._cuda_getCheckpointState``'s answer: a private pool's allocated blocks, by address."""

    pool_id: tuple[int, int]
    blocks: tuple[Checkpointed, ...]


def _storage(value: Any) -> torch.UntypedStorage:
    """A storage the tree names by its ``_cdata`` (an int), or the storage itself."""
    return torch.UntypedStorage._new_with_weak_ptr(value) if isinstance(value, int) else value


def _owner(storage: torch.UntypedStorage) -> torch.UntypedStorage:
    """The device storage whose block ``storage`` is: itself, or the storage an alias of it (a storage the tree
    built from an address: ``kinds.alias``) lies over."""
    if kinds.model_key(storage) is not None:
        return storage
    owner = kinds.storage_at(_real_ptr(storage))
    return storage if owner is None else owner


def get_checkpoint_state(device: Any, pool: Any) -> Checkpoint:
    """``torch._C._cuda_getCheckpointState``: the allocated blocks of the private pool ``pool``; a pool the allocator
    has never made is refused, in its words."""
    allocator = runtime().allocator.read()
    pool_id = tuple(pool)
    if pool_id not in allocator.private:
        raise RuntimeError("Could not find pool of id")
    blocks = sorted((b for b in allocator.active.values() if b.pool.pool_id == pool_id), key=lambda b: b.address)
    return Checkpoint(pool_id, tuple(Checkpointed(b.address, b.size, b.requested, b.pool.small, b.owner)
                                     for b in blocks))


def set_checkpoint_pool_state(device: Any, state: Checkpoint, stale_storages: Sequence[Any],
                              storages_to_add_deleters_to: Sequence[Any]) -> None:
    """``torch._C._cuda_setCheckpointPoolState``: the pool as ``state`` holds it (module docstring)."""
    rt = runtime()
    allocator = rt.allocator.read()
    stale = {storage._cdata for storage in map(_storage, stale_storages)}  # deduplicated as torch does: by StorageImpl
    now = [b for b in allocator.active.values() if b.pool.pool_id == state.pool_id]
    again = {b.address for b in state.blocks}
    for block in now:
        allocator.free_held(block.key)
    if sum(1 for b in now if b.address not in again) > len(stale):
        # CUDA's binding checks after its allocator restored the pool, and the refusal's unwinding frees the blocks
        # the restore allocated: the pool is left wholly free (H100, session 30; its live tensors' deaths then abort
        # the process, "invalid device pointer", which the emulator does not do)
        raise RuntimeError(STALE)
    for block in state.blocks:
        owner = block.owner() if block.owner is not None else None
        key = None if owner is None else key_of(block.owner)
        if key is None or key in allocator.active:
            key = object()
        allocator.allocate_at(key, block.address, block.size, block.requested, block.small, state.pool_id,
                              block.owner if owner is not None else None)
    for value in storages_to_add_deleters_to:
        kinds.own(_storage(value))
    for block in state.blocks:
        restored = allocator.block_at(block.address)
        owner = None if restored is None or restored.owner is None else restored.owner()
        if restored is not None and (owner is None or pools.only_graphs_hold(rt, owner)):
            allocator.ownerless.add(restored.key)


def free_and_remove_deleter(storage: Any) -> None:
    """``torch._C._free_And_Remove_DeleterFn``: the storage's block freed now; its death frees nothing more."""
    allocator = runtime().allocator.read()
    storage = _storage(storage)
    key = kinds.model_key(_owner(storage))
    if key is not None:
        allocator.free_held(key)
    kinds.drop_deleter(storage)


def has_standard_deleter(storage: Any) -> bool:
    """``torch._C._has_Standard_Deleter``: whether the caching allocator frees the storage's block at its death."""
    return kinds.has_deleter(_storage(storage))


def patches() -> list[tuple[Any, str, Any]]:
    """What ``emulate_cuda()`` puts in place (``install.py``): on a CUDA build too (its own would ask its allocator
    about CPU memory)."""
    by_name = {"_cuda_getCheckpointState": get_checkpoint_state,
               "_cuda_setCheckpointPoolState": set_checkpoint_pool_state,
               "_free_And_Remove_DeleterFn": free_and_remove_deleter,
               "_has_Standard_Deleter": has_standard_deleter}
    return [(torch._C, name, value) for name, value in by_name.items()]
