"""``torch.cuda.MemPool`` / ``use_mem_pool``, ``caching_allocator_alloc`` / ``_delete``, ``cudart()`` /
``check_error``, ``current_blas_handle``, stream priorities and the memory fraction, on both arms, as the H200
gives them (torch 2.11; evidence/h200-device-calls-2026-12-03-session11.txt). On a CPU-only torch every one
of them raised (a dummy ``MemPool`` base class, ``torch._C`` functions only a CUDA build has)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import pytest
import torch

from seam.cuda_backend import end_generator_capture
from seam.torch_cuda import child_environment

# The caching allocator's figures and words: on the cuda arm in a process of their own (conftest.py).
pytestmark = pytest.mark.own_process


def _pool_figures(pool: torch.cuda.MemPool) -> list[tuple[str, int, int, tuple[int, int]]]:
    return [(s["segment_type"], s["total_size"], s["allocated_size"], tuple(s["segment_pool_id"])) for s in pool.snapshot()]


def test_a_mempool_takes_this_threads_allocations_and_keeps_its_freed_blocks(torch_cuda: str) -> None:
    pool = torch.cuda.MemPool()
    assert pool.id[0] == 0 and pool.id[1] > 0
    assert pool.use_count() == 1
    with torch.cuda.use_mem_pool(pool):
        assert pool.use_count() == 2
        inside = torch.ones(1000, device="cuda")
    assert pool.use_count() == 1
    outside = torch.ones(1000, device="cuda")
    assert _pool_figures(pool) == [("small", 2097152, 4096, pool.id)]
    assert outside.device.type == "cuda"
    del inside
    gc.collect()
    assert [s["allocated_size"] for s in pool.snapshot()] == [0]
    with torch.cuda.use_mem_pool(pool):
        again = torch.ones(1000, device="cuda")
    assert _pool_figures(pool) == [("small", 2097152, 4096, pool.id)]  # the pool's own freed block, no new segment
    other = torch.cuda.MemPool()
    assert other.id == (0, pool.id[1] + 1)
    assert again.sum().item() == 1000


def test_an_operations_result_inside_use_mem_pool_is_allocated_in_the_pool(torch_cuda: str) -> None:
    """Not only a factory's: a device operation's new result inside ``use_mem_pool`` comes from the pool, and after
    it the thread allocates in the default pool again. (The emulated device mode's fast path logs results itself:
    it must see the pool come and go.)"""
    x = torch.ones(1000, device="cuda")
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        y = x + x
    z = x + x
    assert _pool_figures(pool) == [("small", 2097152, 4096, pool.id)]
    assert y.sum().item() == z.sum().item() == 2000


def test_a_graph_captured_into_a_mempool_allocates_in_it(torch_cuda: str) -> None:
    pool = torch.cuda.MemPool()
    x = torch.ones(4, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, pool=pool.id):
        y = x * 2
    graph.replay()
    torch.cuda.synchronize()
    assert y.tolist() == [2.0, 2.0, 2.0, 2.0]
    assert [(s["total_size"], tuple(s["segment_pool_id"])) for s in pool.snapshot()] == [(2097152, pool.id)]
    assert pool.use_count() == 2  # the object's and the graph's


def test_raw_blocks_are_counted_and_freed(torch_cuda: str) -> None:
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    one = torch.cuda.caching_allocator_alloc(1)
    assert isinstance(one, int) and torch.cuda.memory_allocated() - base == 512
    more = torch.cuda.caching_allocator_alloc(3000, stream=torch.cuda.current_stream())
    assert torch.cuda.memory_allocated() - base == 3584
    torch.cuda.caching_allocator_delete(one)
    torch.cuda.caching_allocator_delete(more)
    assert torch.cuda.memory_allocated() == base


def test_the_runtime_answers_as_cudas(torch_cuda: str) -> None:
    torch.cuda.check_error(0)
    with pytest.raises(torch.cuda.CudaError, match=r"^out of memory \(2\)$"):
        torch.cuda.check_error(2)
    assert int(torch.cuda.cudart().cudaError.success) == 0
    handle = torch.cuda.current_blas_handle()
    assert isinstance(handle, int) and handle == torch.cuda.current_blas_handle()


def test_the_memory_fraction_is_kept(torch_cuda: str) -> None:
    assert torch.cuda.get_per_process_memory_fraction(0) == 1.0
    torch.cuda.set_per_process_memory_fraction(0.5)
    try:
        assert torch.cuda.get_per_process_memory_fraction(0) == 0.5
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)


PINNED_FIGURES = """
import json, torch
seen = [torch.cuda.host_memory_stats()]
pinned = torch.empty(3 * 2**20, pin_memory=True)
small = torch.ones(100).pin_memory()
seen.append(torch.cuda.host_memory_stats())
seen.append([torch.cuda.reset_peak_host_memory_stats(), torch.cuda.reset_accumulated_host_memory_stats(),
             torch.cuda.host_memory_stats_as_nested_dict(), pinned.is_pinned(), small.is_pinned()])
print(json.dumps(seen))
"""


def test_the_pinned_allocators_figures_of_a_fresh_process_are_the_h200s(torch_cuda: str) -> None:
    # torch 2.11 on the H200: empty, before and after pinned allocations, and the resets answer None. In a
    # FRESH process: after this suite's other work the H200 counts figures (num_host_free and 28 more, owed)
    env = child_environment(os.environ) if torch_cuda == "cpu-emulated" else dict(os.environ)
    done = subprocess.run([sys.executable, "-c", PINNED_FIGURES], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == [{}, {}, [None, None, {}, True, True]]


def test_stream_priorities_are_clamped_into_the_devices_range(torch_cuda: str) -> None:
    assert torch.cuda.Stream.priority_range() == (0, -3)
    assert [torch.cuda.Stream(priority=p).priority for p in (0, -1, -3, -5, -10, 3)] == [0, -1, -3, -3, -3, 0]


def test_a_pool_already_recorded_to_is_refused_a_second_recording(torch_cuda: str) -> None:
    # the H200 (torch 2.11, corpus: use_mem_pool_of_a_pool_already_recorded_to_is_refused): the allocator
    # records to a pool once at a time, nested or not, by use_mem_pool or by a capture
    a, b = torch.cuda.MemPool(), torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(a):
        with torch.cuda.use_mem_pool(b):
            with pytest.raises(RuntimeError, match="^beginAllocateToPool: already recording to mempool_id"):
                with torch.cuda.use_mem_pool(a):
                    pass
        x = torch.ones(4, device="cuda")
        try:
            with pytest.raises(RuntimeError, match="^beginAllocateToPool: already recording to mempool_id"):
                with torch.cuda.graph(torch.cuda.CUDAGraph(), pool=a.id):
                    x * 2
        finally:  # the refused begin ran the generator's prologue (torch 2.11): end its capture
            end_generator_capture("cuda")
    with torch.cuda.use_mem_pool(a):  # the uses ended: it may be recorded to again
        assert torch.ones(4, device="cuda").sum().item() == 4
