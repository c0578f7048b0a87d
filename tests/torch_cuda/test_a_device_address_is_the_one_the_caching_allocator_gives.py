"""A device tensor's ``data_ptr()`` is the address CUDA's caching allocator gives its block, on both arms.

On a GPU a freed block's address is handed to the next request of its stream and pool that fits (best fit, lowest
address first), a smaller request splits it, and blocks carved from one segment lie side by side at their rounded
sizes. Tests written elsewhere assert exactly that (PyTorch's own ``test_record_stream``: "allocation not re-used";
the corpus's ``a_freed_block_is_reused_on_its_own_stream_only`` and
``freed_neighbours_merge_and_empty_cache_releases_only_wholly_free_segments``, H200). The emulated device keeps its
memory in CPU storages, so its ``data_ptr()`` used to be the CPU allocator's placement: a freed block's address came
back or not as glibc chose. Now it says the allocator model's address (``seam/torch_cuda/addresses.py``), and every
path that takes an address back (a storage made from a data pointer, the raw allocator's delete) reads it the same way.
"""

from __future__ import annotations

import pytest
import torch

# Which free block a request takes depends on the blocks earlier cases left in the process (on the H100 at 238f25c,
# sharing a process with other files, a request took another free block of its size): in a process of their own on
# the cuda arm (conftest.py), as the caching allocator's other figures are.
pytestmark = pytest.mark.own_process


def _settled() -> None:
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def test_a_freed_block_goes_to_the_next_request_of_its_stream_and_a_smaller_one_splits_it(torch_cuda: str) -> None:
    side = torch.cuda.Stream()
    _settled()
    a = torch.empty(1000, device="cuda")
    freed = a.data_ptr()
    del a
    b = torch.empty(1000, device="cuda")
    assert b.data_ptr() == freed
    del b
    with torch.cuda.stream(side):
        c = torch.empty(1000, device="cuda")
    assert c.data_ptr() != freed  # another stream's request never takes it
    d = torch.empty(500, device="cuda")  # 2000 bytes: a block of 2048 split from the freed 4096
    e = torch.empty(100, device="cuda")
    assert (d.data_ptr(), e.data_ptr()) == (freed, freed + 2048)
    del c


def test_blocks_carved_from_one_segment_lie_side_by_side_at_their_rounded_sizes(torch_cuda: str) -> None:
    _settled()
    a, b, c = (torch.empty(1 << 16, device="cuda") for _ in range(3))  # 256 KiB each, one small-pool segment
    assert [b.data_ptr() - a.data_ptr(), c.data_ptr() - b.data_ptr()] == [262144, 262144]
    odd = [torch.empty(3, device="cuda") for _ in range(3)]  # 12 bytes: a block of 512 each
    assert [odd[1].data_ptr() - odd[0].data_ptr(), odd[2].data_ptr() - odd[1].data_ptr()] == [512, 512]


def test_live_tensors_never_share_an_address_and_views_and_storages_agree(torch_cuda: str) -> None:
    live = [torch.empty(n % 7 + 1, 64, device="cuda") for n in range(200)]
    assert len({t.data_ptr() for t in live}) == len(live)
    x = torch.arange(12.0, device="cuda").reshape(3, 4)
    assert x[1:].data_ptr() == x.data_ptr() + 4 * 4
    assert x.t().data_ptr() == x.data_ptr()
    assert x.untyped_storage().data_ptr() == x.data_ptr()
    assert x[2:].untyped_storage().data_ptr() == x.data_ptr()
    blocks = {blk["address"] for seg in torch.cuda.memory_snapshot() for blk in seg["blocks"]
              if blk["state"] == "active_allocated"}
    assert x.data_ptr() in blocks and all(t.data_ptr() in blocks for t in live[:5])


def test_a_storage_made_from_a_device_address_is_that_memory(torch_cuda: str) -> None:
    x = torch.arange(8.0, device="cuda")
    storage = torch._C._construct_storage_from_data_pointer(x.data_ptr(), x.device, x.untyped_storage().nbytes())
    assert storage.data_ptr() == x.data_ptr()
    y = torch.empty(0, device="cuda").set_(storage, 0, (8,), (1,))
    x.add_(1)
    assert y.tolist() == [float(v) for v in range(1, 9)]


def test_the_raw_allocators_freed_block_goes_to_the_next_tensor_of_its_size(torch_cuda: str) -> None:
    _settled()
    address = torch.cuda.caching_allocator_alloc(4096)
    torch.cuda.caching_allocator_delete(address)
    t = torch.empty(1024, device="cuda")
    assert t.data_ptr() == address
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        torch.cuda.caching_allocator_delete(address + 512)
