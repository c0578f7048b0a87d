"""Pinned host memory under the emulated ``torch.cuda``: CUDA's caching host allocator, on real CPU memory.

On a GPU, pinned memory (``pin_memory()``, ``pin_memory=True``, the staging buffer of a non-blocking device-to-host
copy) comes from torch's ``CachingHostAllocator``: a request is rounded up to a power of two, a freed block goes back
to the free list of its size and the next request of that size takes the block freed last, at the same address. A
block that a non-blocking copy used is not free again until the work the copy's stream had queued is done (the
allocator records an event on that stream and checks it at a later allocation). PyTorch's own
``test_caching_pinned_memory`` checks both: the address comes back after a free, and not while a copy behind a
``torch.cuda._sleep`` may still read it.

Here each block is a CPU storage kept by this cache; a pinned tensor's storage is a slice of it, so ``data_ptr()``
says the block's real address (host memory stays readable through its address: ``ctypes``, ``numpy``). When the
slice dies its block is free again at once, or held until the streams it was used on are done (``pending.py``'s
busy streams: only a ``_sleep`` keeps a stream busy here). ``torch.cuda.empty_host_cache()`` drops the free blocks.
``torch.cuda.cudart().cudaHostRegister`` pins host memory in place (``is_pinned()`` says so until it is
unregistered), as PyTorch's ``test_cudart_register`` checks.

Not modelled: the allocator's statistics (``host_memory_stats``), pinned memory made inside a capture (marked, not
cached), a storage ``torch.load`` reads into pinned memory.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

import torch

from seam.torch_cuda import pending

#: Free blocks by rounded size; the last freed is taken first.
FREE: dict[int, list[torch.UntypedStorage]] = {}
#: Blocks freed while a stream they were used on had work queued: [block, when that work ends].
HELD: list[list[Any]] = []
#: Each live pinned slice this cache handed out, by its id: the streams a non-blocking copy used it on.
_USED_ON: dict[int, set[int]] = {}
#: Host memory pinned in place by ``cudaHostRegister`` (``torch.cuda.cudart()``): its length by its start address.
REGISTERED: dict[int, int] = {}


def round_size(nbytes: int) -> int:
    """The block size a request of ``nbytes`` takes: the next power of two."""
    return 1 << max(0, nbytes - 1).bit_length()


def reset() -> None:
    """A fresh host allocator: nothing cached, nothing held, nothing registered."""
    FREE.clear()
    HELD.clear()
    _USED_ON.clear()
    REGISTERED.clear()


def register(address: int, nbytes: int) -> bool:
    """``cudaHostRegister``: the host memory at ``address`` is pinned from now on; False if it was already."""
    if registered(address):
        return False
    REGISTERED[int(address)] = int(nbytes)
    return True


def unregister(address: int) -> bool:
    """``cudaHostUnregister``: False unless ``address`` starts a registered range."""
    return REGISTERED.pop(int(address), None) is not None


def registered(address: int) -> bool:
    """Whether ``address`` lies in host memory ``cudaHostRegister`` pinned."""
    return any(start <= address < start + size for start, size in REGISTERED.items())


def empty_cache() -> None:
    """``torch._C._host_emptyCache``: the free blocks go back to the system (the held ones stay held)."""
    FREE.clear()


def _release_due() -> None:
    now = time.perf_counter()
    for entry in list(HELD):
        if now >= entry[1]:
            HELD.remove(entry)
            FREE.setdefault(entry[0].nbytes(), []).append(entry[0])


def _freed(block: torch.UntypedStorage, slice_id: int) -> None:
    streams = _USED_ON.pop(slice_id, ())
    end = pending.ends_all(streams)
    if end > time.perf_counter():
        HELD.append([block, end])
    else:
        FREE.setdefault(block.nbytes(), []).append(block)


def storage(nbytes: int) -> torch.UntypedStorage:
    """A host storage of ``nbytes`` (at least one) on a cached block: the last freed of its size, else a new one."""
    _release_due()
    size = round_size(nbytes)
    free = FREE.get(size)
    block = free.pop() if free else torch.UntypedStorage(size)
    piece = block[0:nbytes]  # the block's memory, holding the block
    _USED_ON[id(piece)] = set()
    weakref.finalize(piece, _freed, block, id(piece))
    return piece


def place(tensor: torch.Tensor) -> None:
    """Move ``tensor`` (just made, on host memory of its own) onto a cached pinned block, values and all."""
    from torch.utils._python_dispatch import _disable_current_modes

    old = tensor.untyped_storage()
    if old.nbytes() == 0:  # CUDA's host allocator hands out no memory for zero bytes
        return
    new = storage(old.nbytes())
    with _disable_current_modes(), torch.no_grad():
        new.copy_(old)
        tensor.set_(new, tensor.storage_offset(), tensor.size(), tensor.stride())


def note_copy(stream_id: int, tensors: Any) -> None:
    """A non-blocking copy on the stream ``stream_id`` read or wrote these tensors: the pinned blocks among them are
    not free again until the work that stream has queued is done. The device mode calls it only once a sleep was
    queued (``pending.BUSY``): until then every stream's work is done when it is asked."""
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.is_cpu:
            used_on = _USED_ON.get(id(t.untyped_storage()))
            if used_on is not None:
                used_on.add(stream_id)
