"""Memory kinds under the emulated ``torch.cuda``: device, pinned or pageable, kept on each storage.

A tensor on the emulated device is a plain CPU tensor whose STORAGE is marked ``device``; a view
shares its base's storage, so it is device memory too, and ``x.data = other`` follows ``other``'s
storage, as a real address would. The mark is an attribute of torch's Python storage object (which
torch keeps alive as long as the storage), so reading it costs one attribute lookup, and a storage
that dies takes its mark with it: a recycled id is never misread.
"""

from __future__ import annotations

import collections
import functools
import weakref
from typing import Any, Literal

import torch

from seam.torch_cuda import allocator, cuda_errors, host_cache, memory_frames, routes
from seam.torch_cuda.allocator import DEFAULT_POOL, key_of
from seam.torch_cuda.device import TOTAL_MEMORY
from seam.torch_cuda.runtime import runtime

MemoryKind = Literal["device", "pinned", "pageable"]

_ATTR = "_seam_memory_kind"
#: The attribute of a storage whose deleter a CUDA graph tree took away (``drop_deleter``).
_NO_DELETER = "_seam_no_deleter"
#: torch's own ``UntypedStorage.data_ptr``: the CPU address, which the book-keeping here is keyed by (under
#: emulation the method says the allocator model's address: ``addresses.py``).
_real_ptr = torch._C.StorageBase.data_ptr
#: torch's own count of a storage's references (the emulation puts a GPU's count under the name: ``pools.py``).
_use_count = torch._C._storage_Use_Count


#: Device storages by address, each held by a plain weak reference: what
#: ``torch._C._construct_storage_from_data_pointer`` looks up, and what the memory figures add up
#: (when asked: no bookkeeping on the hot path). Not a ``WeakValueDictionary``: its keyed references
#: and their death callbacks cost a microsecond or two on every device allocation, paid by every
#: operation of an emulated forward. A dead entry reads as absent and is dropped in bulk (``_prune``);
#: a new storage at a dead one's address replaces it, as the dictionary's callback would have.
_BY_ADDRESS: dict[int, "weakref.ref[torch.UntypedStorage]"] = {}
#: ``_BY_ADDRESS``'s size at which the dead entries are next dropped (twice the live ones, at least the floor).
_PRUNE_FLOOR = 4096
_PRUNE_AT = _PRUNE_FLOOR


#: Live aliases per owner storage (by the owner's id; the owner outlives its aliases): storages torch made
#: from a device pointer (``alias``). Each holds one reference on its owner that a GPU's alias would not.
_ALIASES: collections.Counter[int] = collections.Counter()
#: The owners of live aliases, by size then id: an owner nothing but its aliases refers to is free
#: memory, and the next device allocation of its size takes it (``mark_unmarked``), as the caching
#: allocator hands a freed block out again. Empty unless aliases live: the hot path tests it once.
_ALIASED_BY_SIZE: dict[int, dict[int, torch.UntypedStorage]] = {}
#: Each live alias's count on its owner, by the alias's id: what ``own`` takes back.
_UNOWNED: dict[int, Any] = {}


def alias(owner: torch.UntypedStorage, nbytes: int) -> torch.UntypedStorage:
    """A storage over ``owner``'s first ``nbytes``: the same memory, keeping it alive.

    torch's alias on a GPU owns nothing, and reading it after its owner died reads whatever the caching
    allocator left there. A CPU alias that owned nothing would read freed heap memory (a segfault), so
    this one holds its owner; the memory figures and the pools count an owner that only aliases hold as
    freed (``alias_refs``), as a GPU would.
    """
    storage = owner[0:nbytes]
    setattr(storage, _ATTR, "device")
    key = id(owner)
    _ALIASES[key] += 1
    _ALIASED_BY_SIZE.setdefault(owner.nbytes(), {})[key] = owner
    _UNOWNED[id(storage)] = weakref.finalize(storage, _alias_died, key, owner.nbytes(), id(storage))
    rt = runtime()
    rt.allocator.before_read["aliases"] = functools.partial(free_alias_held, rt)
    return storage


def own(storage: torch.UntypedStorage) -> None:
    """The alias ``storage`` owns its memory from now on: a CUDA graph tree gave it a deleter
    (``_cuda_setCheckpointPoolState``'s storages to add deleters to), so the caching allocator counts the block
    allocated while it lives. Its reference on its owner stops being an alias's (``alias_refs``); a storage
    that is no alias has its deleter again (``drop_deleter``)."""
    finalizer = _UNOWNED.pop(id(storage), None)
    if finalizer is not None:
        finalizer()  # the alias's count goes now, and not again when it dies
    if getattr(storage, _NO_DELETER, False):
        delattr(storage, _NO_DELETER)


def has_deleter(storage: torch.UntypedStorage) -> bool:
    """Whether the caching allocator frees ``storage``'s block when it dies (torch's ``_has_Standard_Deleter``): not
    an alias that owns nothing, nor a storage whose deleter a CUDA graph tree took away (``drop_deleter``)."""
    return id(storage) not in _UNOWNED and not getattr(storage, _NO_DELETER, False)


def drop_deleter(storage: torch.UntypedStorage) -> None:
    """``storage`` frees nothing when it dies from now on (``_free_And_Remove_DeleterFn`` freed its block)."""
    setattr(storage, _NO_DELETER, True)


def _alias_died(key: int, size: int, alias_id: int) -> None:
    _UNOWNED.pop(alias_id, None)  # the entry goes with the alias (``own`` has popped it already)
    _ALIASES[key] -= 1
    if _ALIASES[key] <= 0:
        del _ALIASES[key]
        same_size = _ALIASED_BY_SIZE.get(size, {})
        same_size.pop(key, None)
        if not same_size:
            _ALIASED_BY_SIZE.pop(size, None)


def _free_owner(nbytes: int) -> torch.UntypedStorage | None:
    """An owner of ``nbytes`` that only its aliases hold (freed memory on a GPU), if any."""
    for owner in _ALIASED_BY_SIZE.get(nbytes, {}).values():
        if not _held_beyond_aliases(owner):
            return owner
    return None


def _take(tensor: torch.Tensor, owner: torch.UntypedStorage) -> None:
    """Move ``tensor`` (just made, on memory of its own) onto ``owner``'s memory, values and all."""
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes(), torch.no_grad():
        fresh = torch.empty(0, dtype=tensor.dtype).set_(tensor.untyped_storage(), tensor.storage_offset(),
                                                        tensor.size(), tensor.stride())
        tensor.set_(owner, tensor.storage_offset(), tensor.size(), tensor.stride())
        tensor.copy_(fresh)


def alias_refs(storage_id: int) -> int:
    """How many references the live aliases of the storage ``id(storage) == storage_id`` hold on it."""
    return _ALIASES.get(storage_id, 0)


def _held_beyond_aliases(storage: torch.UntypedStorage) -> bool:
    """Whether anything but torch's own Python object for it and its aliases refers to ``storage``."""
    refs = alias_refs(id(storage))
    return refs == 0 or _use_count(storage._cdata) > 1 + refs


def storage_at(data_ptr: int) -> torch.UntypedStorage | None:
    """The live device storage that starts at ``data_ptr``, if any."""
    ref = _BY_ADDRESS.get(data_ptr)
    return None if ref is None else ref()


def live_storages() -> list[torch.UntypedStorage]:
    """Every live device storage (a linear walk: for rare look-ups, never the hot path)."""
    return [s for s in (ref() for ref in list(_BY_ADDRESS.values())) if s is not None]


def _prune() -> None:
    """Drop the entries of storages that died; the next pruning waits until the live ones double."""
    global _PRUNE_AT
    for address, ref in list(_BY_ADDRESS.items()):
        if ref() is None:
            del _BY_ADDRESS[address]
    _PRUNE_AT = max(_PRUNE_FLOOR, 2 * len(_BY_ADDRESS))




def _allocated(storage: torch.UntypedStorage) -> None:
    nbytes = storage.nbytes()
    address = _real_ptr(storage)
    if nbytes:
        rt = runtime()
        ref = _watch(rt, storage, address)
        note_allocation(rt, id(ref), nbytes, ref)  # id(ref): allocator.key_of
    if allocator.allocation_hook is not None:
        allocator.allocation_hook(said_address(address))


def _watch(rt: Any, storage: torch.UntypedStorage, address: int) -> "weakref.ref[torch.UntypedStorage]":
    """A weak reference to a new device storage, registered by address; its death logs the reference itself (the
    log's own ``append`` is the callback: no Python frame runs)."""
    ref = weakref.ref(storage, rt.allocator.on_death)
    _BY_ADDRESS[address] = ref
    if len(_BY_ADDRESS) > _PRUNE_AT:
        _prune()
    return ref


def free_alias_held(rt: Any) -> None:
    """Free, in the allocator model, every owner that nothing but its aliases holds (freed on a GPU)."""
    for same_size in list(_ALIASED_BY_SIZE.values()):
        for owner in list(same_size.values()):
            key = model_key(owner)
            if key in rt.allocator.active and key not in rt.allocator.ownerless and not _held_beyond_aliases(owner):
                rt.allocator.free_held(key)


def model_address(start: int) -> int | None:
    """The allocator model's address of the device block whose storage starts at CPU address ``start`` (what
    ``data_ptr()`` says of it: ``addresses.py``), or of the private pool's block it was last allocated (freed since:
    a GPU's pointer stays where it was); None when the model holds no block for it."""
    ref = _BY_ADDRESS.get(start)
    if ref is None:
        return None
    alloc = runtime().allocator
    if alloc.log:
        alloc.flush()
    block = alloc.active.get(id(ref))  # allocator.key_of
    if block is not None:
        return block.address
    last = alloc.last_address.get(id(ref)) if alloc.last_address else None
    return last[1] if last is not None and last[0] is ref else None


def said_address(start: int) -> int:
    """The address ``data_ptr()`` says for the device storage at CPU address ``start`` (the GPU trace's allocation
    callbacks get it)."""
    said = model_address(start)
    return start if said is None else said


def block_ref(storage: torch.UntypedStorage) -> Any:
    """The weak reference the allocator model keeps for a device storage (None if it has none)."""
    ref = _BY_ADDRESS.get(_real_ptr(storage))
    return ref if ref is not None and ref() is storage else None


def model_key(storage: torch.UntypedStorage) -> int | None:
    """The allocator model's key of a device storage's block (``allocator.key_of``); None if it has none."""
    ref = block_ref(storage)
    return None if ref is None else key_of(ref)


def note_allocation(rt: Any, key: int, nbytes: int, ref: Any, *, played: bool = False) -> None:
    """Tell the allocator model of a new device block on the current stream, into the pool of the last begun entry
    that takes it (``routes.py``): at once on a stream a capture records; else through its log, or at once under a memory
    fraction, whose refusal is CUDA's ``torch.OutOfMemoryError`` from the operation that asked); nothing while the
    caching allocator is off (``torch.cuda.caching_allocator_enable(False)``). ``played``: in a capture, the caller
    has just read the model (``CachingAllocator.malloc_now``)."""
    alloc = rt.allocator
    if not alloc.enabled:  # the caching allocator is off: CUDA's own cudaMalloc, in no figure
        return
    stream = rt.current_stream()
    pool = routes.pool_for(rt, stream) if rt.routes else DEFAULT_POOL  # the last begun entry that takes it
    if alloc.context is not None:  # the memory history records where it was asked for
        alloc.frames_of[key] = memory_frames.gather(alloc.stacks)
    try:
        if rt.captures and rt.capture_of(stream._id) is not None:
            alloc.malloc_now(key, nbytes, stream.cuda_stream, pool, ref, played=played)
            return
        alloc.note_allocation(key, nbytes, stream.cuda_stream, pool, ref)
        if alloc.limit is not None:
            alloc.flush()  # played now: this allocation's refusal is raised here
    except allocator.OverLimit as over:
        raise cuda_errors.out_of_memory(over.tried, TOTAL_MEMORY, TOTAL_MEMORY - over.reserved, over.allocated,
                                        over.reserved, allowed=over.allowed) from None


def kind_of(tensor: torch.Tensor) -> MemoryKind:
    """Where ``tensor``'s memory lives on the emulated machine (host memory ``cudaHostRegister`` pinned in place
    is pinned: ``host_cache.registered``)."""
    storage = tensor.untyped_storage()
    kind = storage_kind(storage)
    if kind == "pageable" and host_cache.REGISTERED and host_cache.registered(_real_ptr(storage)):
        return "pinned"
    return kind


def is_device(tensor: torch.Tensor) -> bool:
    return getattr(tensor.untyped_storage(), _ATTR, None) == "device"


def mark(tensor: torch.Tensor, kind: MemoryKind) -> None:
    """Mark ``tensor``'s storage (and so every view of it) as ``kind`` memory; a new pinned tensor moves onto the
    pinned cache's memory first (``host_cache.py``)."""
    if kind == "pinned":
        _pin(tensor)
    mark_storage(tensor.untyped_storage(), kind)


def _pin(tensor: torch.Tensor) -> None:
    """A new pinned tensor takes a block of the pinned cache (outside captures: one made inside is only marked)."""
    if getattr(tensor.untyped_storage(), _ATTR, None) is None and not runtime().captures:
        host_cache.place(tensor)


def storage_kind(storage: torch.UntypedStorage) -> MemoryKind:
    """Where a storage's memory lives on the emulated machine (what ``torch.save`` records)."""
    return getattr(storage, _ATTR, "pageable")


def mark_storage(storage: torch.UntypedStorage, kind: MemoryKind) -> None:
    """Mark a storage (one ``torch.load`` just read, say) as ``kind`` memory."""
    before = getattr(storage, _ATTR, None)
    if before == kind:
        return
    setattr(storage, _ATTR, kind)
    if kind == "device":
        _allocated(storage)


def mark_unmarked(tensor: torch.Tensor, kind: MemoryKind) -> None:
    """Mark ``tensor``'s storage as ``kind`` unless it already has a kind (the device mode's hot path)."""
    storage = tensor.untyped_storage()
    if getattr(storage, _ATTR, None) is None:
        if kind == "pinned":
            _pin(tensor)
            storage = tensor.untyped_storage()
        if _ALIASED_BY_SIZE and kind == "device":
            owner = _free_owner(storage.nbytes())
            if owner is not None:
                _take(tensor, owner)
                ref = block_ref(owner)
                note_allocation(runtime(), key_of(ref), owner.nbytes(), ref)
                return
        setattr(storage, _ATTR, kind)
        if kind == "device":
            _allocated(storage)


class StorageKinds:
    """The registry interface the seam's capture recorder reads (``mark`` / ``kind_of``)."""

    @staticmethod
    def mark(tensor: torch.Tensor, kind: MemoryKind) -> None:
        mark(tensor, kind)

    @staticmethod
    def kind_of(tensor: torch.Tensor) -> MemoryKind:
        return kind_of(tensor)


REGISTRY = StorageKinds()
