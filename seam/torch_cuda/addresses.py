"""Device addresses under the emulated ``torch.cuda``: what ``data_ptr()`` says of device memory.

A device tensor's memory is a CPU storage (``kinds.py``), placed by the CPU's allocator; the caching allocator's
model (``allocator.py``) places the same block as CUDA's would: a freed block's address goes to the next request of
its stream and pool that fits, a smaller request splits it, blocks of one segment lie side by side at their rounded
sizes. ``Tensor.data_ptr()`` and ``UntypedStorage.data_ptr()`` of device memory say the MODEL's address (plus the
view's offset), so a test that checks a block's reuse or placement reads what a GPU would (the H200's corpus:
``a_freed_block_is_reused_on_its_own_stream_only``; PyTorch's ``test_record_stream``). Everything that takes an
address back (``torch._C._construct_storage_from_data_pointer``, the raw allocator's delete) reads it through
``storage_at``. Host memory, and device memory the model holds no block for (an empty storage, a default-pool block
only graphs hold), says the CPU's address; a private pool's storage whose block was freed says the address it last
had there (a GPU's pointer stays where it was, and CUDA graph trees rebuild tensors from it: ``checkpoints.py``).

The emulator's own book-keeping keys storages by their CPU address (``real_storage_ptr``): those calls never go
through the patched methods.
"""

from __future__ import annotations

from typing import Any

import torch

from seam.torch_cuda import kinds
from seam.torch_cuda.runtime import runtime

#: torch's own methods: the CPU address.
real_tensor_ptr = torch._C.TensorBase.data_ptr
real_storage_ptr = torch._C.StorageBase.data_ptr
_storage_of = torch._C.TensorBase.untyped_storage


def storage_data_ptr(self: torch.UntypedStorage) -> int:
    """``UntypedStorage.data_ptr()``: device memory at the model's address."""
    real = real_storage_ptr(self)
    if not real or kinds.storage_kind(self) != "device":
        return real
    address = kinds.model_address(real)
    return real if address is None else address


def tensor_data_ptr(self: torch.Tensor) -> int:
    """``Tensor.data_ptr()``: device memory at the model's address, plus the view's offset."""
    try:
        storage = _storage_of(self)
    except (RuntimeError, NotImplementedError):  # a tensor without storage (sparse, a subclass's wrapper)
        return real_tensor_ptr(self)
    if kinds.storage_kind(storage) != "device":
        return real_tensor_ptr(self)
    address = kinds.model_address(real_storage_ptr(storage))
    if address is None:
        return real_tensor_ptr(self)
    # not ``real_tensor_ptr(self)`` less the storage's start: under a torch function mode torch's own method hands
    # the call to the mode, which calls this one (the name's value on ``torch.Tensor``)
    return address + self.storage_offset() * self.element_size()


def storage_at(address: int, nbytes: int = 0) -> torch.UntypedStorage | None:
    """The live device storage that starts at ``address``: a model address (what ``data_ptr()`` says) of an allocated
    block, or of a freed block of a private pool (the newest storage last allocated there of ``nbytes`` bytes, else
    the newest that holds them, else the newest: the memory a GPU still has there, which a CUDA graph tree reads
    through the outputs it rebuilds after a replay, with the size their storage had), else a CPU one (device memory
    the model holds no block for). The model is read first (``CachingAllocator.read``), so a block only graphs held is
    free here, as on a GPU, and the tree's output is not rebuilt over it (``pools.gpu_use_count`` tells the tree such
    an output is dead)."""
    alloc = runtime().allocator.read()
    block = alloc.block_at(address)
    storage = block.owner() if block is not None and block.owner is not None else None
    if storage is None:
        there = alloc.storages_at(address)
        storage = next((s for s in there if s.nbytes() == nbytes),
                       next((s for s in there if s.nbytes() >= nbytes), there[0] if there else None))
    return storage if storage is not None else kinds.storage_at(address)


def memory_at(address: int, nbytes: int) -> tuple[torch.UntypedStorage, int] | None:
    """The live device storage that holds the ``nbytes`` bytes at ``address`` (what ``data_ptr()`` says, of a tensor or
    a view inside one), with the byte offset of ``address`` in it; None where no device memory holds them all: what a
    library given a raw device pointer reads and writes (``nccl_library.py``). An allocated block of the model first,
    then a device storage the model holds no block for (its CPU address)."""
    alloc = runtime().allocator.read()
    for block in list(alloc.active.values()):
        if block.address <= address < block.address + block.size and block.owner is not None:
            storage = block.owner()
            if storage is not None and address - block.address + nbytes <= storage.nbytes():
                return storage, address - block.address
    for storage in kinds.live_storages():
        start = real_storage_ptr(storage)
        if start <= address and address + nbytes <= start + storage.nbytes() and storage_data_ptr(storage) == start:
            return storage, address - start
    return None


def patches() -> list[tuple[Any, str, Any]]:
    """What ``emulate_cuda()`` puts in place (``install.py``)."""
    return [(torch.Tensor, "data_ptr", tensor_data_ptr), (torch.UntypedStorage, "data_ptr", storage_data_ptr)]
