"""Emulated only (the caching allocator's model): a private pool's addresses lead to the storages last allocated
there (``CachingAllocator.last_at``: a CUDA graph tree reads a freed output's memory through them) until
``empty_cache`` releases the segment; then the model keeps nothing for its addresses. Addresses are never given
twice, so the lists kept after the release (as before) only grew: one per address a private pool ever used."""

from __future__ import annotations

import gc

import torch

from seam.torch_cuda.runtime import runtime


def test_a_released_private_segment_keeps_no_storages_at_its_addresses(emulated: None) -> None:
    x = torch.ones(4, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = x * 2
        z = torch.zeros(1 << 20, device="cuda") + y.sum()  # a large block: the pool's second segment
    graph.replay()
    addresses, pool = {y.data_ptr(), z.data_ptr()}, graph.pool()
    allocator = runtime().allocator
    assert addresses <= set(allocator.read().last_at)
    del graph, y, z
    gc.collect()
    torch.cuda.empty_cache()
    assert pool not in allocator.read().private  # its segments released
    assert not addresses & set(allocator.last_at)
