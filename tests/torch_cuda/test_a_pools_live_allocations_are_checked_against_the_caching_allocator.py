"""``torch._C._cuda_checkPoolLiveAllocations(device, pool, data_ptrs)``, on both arms: whether the allocated blocks of
a graph's private pool are exactly those that start at ``data_ptrs``.

CUDA's caching allocator answers from its own blocks (c10/cuda/CUDACachingAllocator.cpp,
``checkPoolLiveAllocations``): an address given that no allocated block of the pool starts at, or an allocated
block not given, says False; a pool it never made is refused. A graph's output that died frees its block, though
the graph writes there at each replay. CUDA graph trees call it to check their pool (``check_memory_pool``); PyTorch's
``TestBlockStateAbsorption.test_check_pool_live_allocations`` calls it directly. The emulated device answered yes to
everything."""

from __future__ import annotations

import pytest
import torch

from tests.torch_cuda.side_capture import captured


def test_the_pools_allocated_blocks_are_exactly_the_addresses_given(torch_cuda: str) -> None:
    pool, device = torch.cuda.graph_pool_handle(), torch.cuda.current_device()
    x = torch.ones(16, device="cuda")
    outputs: list[torch.Tensor] = []
    graph = torch.cuda.CUDAGraph()  # alive to the end: the pool stays the graph's
    captured(graph, lambda: outputs.extend((x * 2, x + 1)), pool=pool)
    first, second = outputs
    del outputs

    def check(data_ptrs: set[int]) -> bool:
        return torch._C._cuda_checkPoolLiveAllocations(device, pool, data_ptrs)

    both = {first.data_ptr(), second.data_ptr()}
    assert [check(both), check({first.data_ptr()}), check(both | {0}), check(set())] == [True, False, False, False]
    del first
    assert [check({second.data_ptr()}), check(both)] == [True, False]
    del second
    assert check(set())
    graph.replay()  # the graph still writes there


def test_a_pool_the_allocator_never_made_is_refused(torch_cuda: str) -> None:
    with pytest.raises(RuntimeError, match="^Could not find pool of id"):
        torch._C._cuda_checkPoolLiveAllocations(torch.cuda.current_device(), torch.cuda.graph_pool_handle(), set())
