"""Device memory that only aliases hold is free: the next allocation of its size takes it.

A storage torch makes from a device pointer (``torch._C._construct_storage_from_data_pointer``: the
replay aliases of breakable- and piecewise-cuda-graphs, cudagraph trees) owns nothing on a GPU. Once
its owner dies, the caching allocator hands the block to the next allocation of that size, and the
alias reads what that allocation writes. The libraries rely on it: pinning an eager segment's tensor
through an alias must not block the reuse of its memory (their ``test_pin_does_not_block_memory_reuse``).
"""

from __future__ import annotations

import gc

import torch


def test_an_allocation_of_the_freed_owners_size_takes_its_memory(torch_cuda: str) -> None:
    numel = 4099  # an odd size no other block of this test has
    # On a stream of its own: the caching allocator hands out free blocks per stream, best fit first, and on
    # the default stream a free block that earlier tests left (of a size between this request and the freed
    # block merged with its free neighbours) would be the better fit (H200, session 14).
    with torch.cuda.stream(torch.cuda.Stream()):
        owner = torch.full((numel,), 7.0, device="cuda")
        storage = owner.untyped_storage()
        address = storage.data_ptr()
        alias = torch._C._construct_storage_from_data_pointer(address, owner.device, storage.nbytes())
        del owner, storage
        gc.collect()
        reused = torch.empty(numel, device="cuda")
    assert reused.data_ptr() == address
    reused.fill_(3.0)
    view = torch._C._construct_CUDA_Tensor_From_Storage_And_Metadata(
        {"dtype": torch.float32, "storage_offset": 0, "size": (numel,), "stride": (1,)}, alias)
    assert view[0].item() == 3.0 and view[-1].item() == 3.0


def test_memory_an_owner_still_holds_is_not_handed_out(torch_cuda: str) -> None:
    numel = 4099
    owner = torch.full((numel,), 7.0, device="cuda")
    storage = owner.untyped_storage()
    alias = torch._C._construct_storage_from_data_pointer(storage.data_ptr(), owner.device, storage.nbytes())
    other = torch.zeros(numel, device="cuda")
    assert other.data_ptr() != owner.data_ptr()
    assert owner[0].item() == 7.0 and alias.nbytes() == storage.nbytes()
