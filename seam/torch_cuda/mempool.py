"""``torch.cuda.MemPool``, ``use_mem_pool`` and the raw allocations of the caching allocator, emulated.

A CPU-only torch has a dummy ``_MemPool`` base class (``MemPool()`` raises) and none of the ``torch._C``
functions these call. Here, over the allocator model (``allocator.py``):

- a ``MemPool`` is a private pool of the model with a user pool's id (``(0, n)``, from the counter
  ``graph_pool_handle()`` draws from; a graph's own pools are ``(n, 0)``), holding one use while the object
  lives; ``snapshot()`` lists its
  segments (``memory_snapshot(pool.id)``);
- inside ``use_mem_pool(pool)`` this thread's device allocations go to the pool where no entry begun before takes
  them (``routes.py``), and its freed blocks serve only the pool's later requests;
- ``torch.cuda.graph(g, pool=pool.id)`` captures into the same pool (the graph's pool is its id);
- ``caching_allocator_alloc(size)`` makes a device block of ``size`` bytes and returns its address;
  ``caching_allocator_delete(address)`` frees it.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch

from seam.torch_cuda.addresses import storage_at
from seam.torch_cuda.runtime import runtime

class MemPool:
    """``torch.cuda.MemPool`` on the emulated device (``allocator`` and the OOM options are accepted and
    not modelled: the emulated device's memory is the host's)."""

    def __init__(self, allocator: Any = None, use_on_oom: bool = False, no_split: bool = False) -> None:
        rt = runtime()
        self._id = (0, next(rt.pool_ids))  # the counter graph_pool_handle() draws from
        self.allocator = allocator
        rt.allocator.begin_pool(self._id)
        weakref.finalize(self, _release, rt, self._id)

    @property
    def id(self) -> tuple[int, int]:
        return self._id

    def use_count(self) -> int:
        model = runtime().allocator
        model.flush()
        pool = model.private.get(self._id)
        return 0 if pool is None else pool.use_count

    def snapshot(self, include_traces: bool = True) -> list[dict[str, Any]]:
        return torch.cuda.memory_snapshot(self._id)


def _release(rt: Any, pool_id: tuple[int, int]) -> None:
    if rt is runtime():
        rt.allocator.release_pool(pool_id)


def release_pool(device: int, pool_id: Any) -> None:
    """``torch._C._cuda_releasePool``: the use ``begin`` took is given back."""
    runtime().allocator.release_pool(tuple(pool_id))


def raw_alloc(size: int, stream: int) -> int:
    """``torch._C._cuda_cudaCachingAllocator_raw_alloc``: a device block of ``size`` bytes; its address."""
    block = torch.empty(max(0, int(size)), dtype=torch.uint8, device="cuda").untyped_storage()
    block._seam_raw_block = True  # ``raw_delete`` frees it from the runtime that gave it only
    address = block.data_ptr()
    runtime().raw_blocks[address] = block
    return address


def raw_delete(address: int) -> None:
    """``torch._C._cuda_cudaCachingAllocator_raw_delete``: free the block ``raw_alloc`` gave, or the allocated block at
    ``address`` of a device storage, in the allocator model (a CUDA graph tree's frees of the outputs that died
    since its checkpoint: ``checkpoints.py``; the CPU memory stays its storage's); any other address is refused, as
    CUDA's allocator refuses it."""
    rt = runtime()
    if rt.raw_blocks.pop(int(address), None) is not None:
        return
    storage = storage_at(int(address))
    if storage is None or getattr(storage, "_seam_raw_block", False):  # another runtime's raw block is not ours
        raise RuntimeError("invalid device pointer: " + hex(int(address)))
    block = rt.allocator.block_at(int(address))
    if block is not None:
        rt.allocator.free_held(block.key)


def caching_allocator_enable(value: bool = True) -> None:
    """``torch._C._cuda_cudaCachingAllocator_enable``: off, each new device allocation bypasses the caching allocator
    (CUDA's ``cudaMalloc``: counted in no figure, nor is its free); on again, new ones are counted."""
    runtime().allocator.set_enabled(bool(value))


def caching_allocator_is_enabled() -> bool:
    """``torch._C._cuda_cudaCachingAllocator_is_enabled``."""
    return runtime().allocator.enabled


def patches() -> list[tuple[Any, str, Any]]:
    """What ``emulate_cuda()`` puts in place (``install.py``)."""
    functions = {"_cuda_releasePool": release_pool,
                 "_cuda_cudaCachingAllocator_raw_alloc": raw_alloc,
                 "_cuda_cudaCachingAllocator_raw_delete": raw_delete,
                 "_cuda_cudaCachingAllocator_enable": caching_allocator_enable,
                 "_cuda_cudaCachingAllocator_is_enabled": caching_allocator_is_enabled}
    out: list[tuple[Any, str, Any]] = [(torch._C, name, value) for name, value in functions.items()]
    out.extend((torch.cuda.memory, name, value) for name, value in functions.items() if hasattr(torch.cuda.memory, name))
    out.extend([(torch.cuda, "MemPool", MemPool), (torch.cuda.memory, "MemPool", MemPool)])
    return out
