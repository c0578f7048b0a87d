"""Where the caching allocator puts a new block while pools are recorded to, on both arms.

CUDA's allocator keeps one list per device of (pool, filter) entries in begin order (``captures_underway``): a
capture's, ``use_mem_pool``'s (this thread), ``torch._C._cuda_beginAllocateCurrentStreamToPool``'s (one stream)
and ``torch._C._cuda_beginAllocateToPool``'s (every stream). A new block goes to the pool of the entry begun LAST
whose filter takes it; ``_cuda_endAllocateToPool(device, pool)`` removes the entry of that pool, whoever made it. Engines
lean on this: SGLang's and vLLM's symmetric-memory allocators, inside a capture, end the graph's entry, allocate
in their own pool, and begin a thread entry of the graph's pool again, which the capture's end then removes.
(c10/cuda/CUDACachingAllocator.cpp: ``beginAllocateToPool``, ``endAllocateToPool``, ``get_pool``.)"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import pytest
import torch

from seam.cuda_backend import end_generator_capture

# The caching allocator's figures: on the cuda arm in a process of their own (conftest.py).
pytestmark = pytest.mark.own_process

NOT_RECORDING = "^endAllocatePool: not currently recording to mempool_id"
ALREADY = "^beginAllocateToPool: already recording to mempool_id"


def _pool_of(tensor: torch.Tensor) -> tuple[int, int] | None:
    """The pool of the live block ``tensor`` starts (None: no such block)."""
    for segment in torch.cuda.memory_snapshot():
        for block in segment["blocks"]:
            if block["address"] == tensor.data_ptr() and block["state"] == "active_allocated":
                return tuple(segment["segment_pool_id"])
    return None


@contextlib.contextmanager
def _every_stream_to(pool: torch.cuda.MemPool) -> Iterator[None]:
    """``torch._C._cuda_beginAllocateToPool`` for the block, ended and its use given back after."""
    device = torch.cuda.current_device()
    torch._C._cuda_beginAllocateToPool(device, pool.id)
    try:
        yield
    finally:
        torch._C._cuda_endAllocateToPool(device, pool.id)
        torch._C._cuda_releasePool(device, pool.id)


def _made_in_another_thread() -> torch.Tensor:
    made: list[torch.Tensor] = []
    thread = threading.Thread(target=lambda: made.append(torch.ones(1000, device="cuda")))
    thread.start()
    thread.join()
    return made[0]


def test_begin_allocate_to_pool_routes_every_stream_and_thread(torch_cuda: str) -> None:
    pool, side = torch.cuda.MemPool(), torch.cuda.Stream()
    with _every_stream_to(pool):
        here = torch.ones(1000, device="cuda")
        with torch.cuda.stream(side):
            there = torch.ones(1000, device="cuda")
        theirs = _made_in_another_thread()
    after = torch.ones(1000, device="cuda")
    torch.cuda.synchronize()
    assert [_pool_of(t) for t in (here, there, theirs)] == [pool.id] * 3
    assert _pool_of(after) == (0, 0)
    assert pool.use_count() == 1


def test_begin_allocate_current_stream_to_pool_routes_that_stream_only(torch_cuda: str) -> None:
    if torch_cuda == "cuda" and not hasattr(torch._C, "_cuda_beginAllocateCurrentStreamToPool"):
        # a GPU's torch may lack it; the emulation always has it (no skip there for want of it: that would hide a red)
        pytest.skip("this torch has no torch._C._cuda_beginAllocateCurrentStreamToPool")
    pool, side, device = torch.cuda.MemPool(), torch.cuda.Stream(), torch.cuda.current_device()
    with torch.cuda.stream(side):
        torch._C._cuda_beginAllocateCurrentStreamToPool(device, pool.id)
    try:
        with torch.cuda.stream(side):
            on_side = torch.ones(1000, device="cuda")
        on_default = torch.ones(1000, device="cuda")
    finally:
        torch._C._cuda_endAllocateToPool(device, pool.id)
        torch._C._cuda_releasePool(device, pool.id)
    torch.cuda.synchronize()
    assert (_pool_of(on_side), _pool_of(on_default)) == (pool.id, (0, 0))


def test_the_entry_begun_last_that_takes_a_block_wins(torch_cuda: str) -> None:
    """CUDA's ``get_pool`` searches its entries from the end: a nested ``use_mem_pool`` allocates in the inner pool
    (as the H200 gives the corpus' ``nested_uses_of_two_mempools_route_each_allocation_to_the_innermost``), a
    capture begun inside ``use_mem_pool`` in the capture's pool, and a ``use_mem_pool`` begun inside a device-wide
    routing takes this thread's blocks while another thread's still go to the device-wide pool."""
    outer, inner, everywhere = torch.cuda.MemPool(), torch.cuda.MemPool(), torch.cuda.MemPool()
    x = torch.ones(1000, device="cuda")
    with torch.cuda.use_mem_pool(outer), torch.cuda.use_mem_pool(inner):
        nested = torch.ones(1000, device="cuda")
    graph, pool, side = torch.cuda.CUDAGraph(), torch.cuda.graph_pool_handle(), torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.use_mem_pool(outer), torch.cuda.stream(side):
        graph.capture_begin(pool=pool)
        captured = x * 2
        graph.capture_end()
    torch.cuda.current_stream().wait_stream(side)
    graph.replay()
    with _every_stream_to(everywhere), torch.cuda.use_mem_pool(outer):
        mine = torch.ones(1000, device="cuda")
        theirs = _made_in_another_thread()
    torch.cuda.synchronize()
    assert [_pool_of(t) for t in (nested, captured, mine, theirs)] == [inner.id, pool, outer.id, everywhere.id]
    assert captured.sum().item() == 2000


def test_a_capture_may_hand_its_pool_to_this_thread_and_allocate_in_another(torch_cuda: str) -> None:
    """SGLang's and vLLM's symmetric memory inside a capture: the graph's entry ended, a block made in the
    symmetric pool, a thread entry of the graph's pool begun again (which the capture's end removes)."""
    symmetric, device = torch.cuda.MemPool(), torch.cuda.current_device()
    x = torch.ones(1000, device="cuda")
    graph, pool = torch.cuda.CUDAGraph(), torch.cuda.graph_pool_handle()
    with torch.cuda.graph(graph, pool=pool):
        before = x * 2
        torch._C._cuda_endAllocateToPool(device, pool)
        with torch.cuda.use_mem_pool(symmetric):
            shared = torch.empty(1000, device="cuda")
        torch._C._cuda_beginAllocateCurrentThreadToPool(device, pool)
        shared.copy_(before)
        after = shared + 1
    graph.replay()
    torch.cuda.synchronize()
    assert [_pool_of(t) for t in (before, shared, after)] == [pool, symmetric.id, pool]
    assert after.sum().item() == 3000
    with pytest.raises(RuntimeError, match=NOT_RECORDING):  # the capture's end removed the thread's entry
        torch._C._cuda_endAllocateToPool(device, pool)
    later = torch.ones(1000, device="cuda")
    torch.cuda.synchronize()
    assert _pool_of(later) == (0, 0)


def test_ending_a_pool_nothing_records_to_is_refused(torch_cuda: str) -> None:
    pool = torch.cuda.MemPool()
    with pytest.raises(RuntimeError, match=NOT_RECORDING):
        torch._C._cuda_endAllocateToPool(torch.cuda.current_device(), pool.id)


def test_a_refused_second_recording_has_taken_a_use_of_the_pool(torch_cuda: str) -> None:
    """CUDA counts the use before it looks for the pool among those recorded to: the refused begin keeps it (given
    back here: a MemPool's end asserts it holds the last use)."""
    pool, device = torch.cuda.MemPool(), torch.cuda.current_device()
    with torch.cuda.use_mem_pool(pool):
        assert pool.use_count() == 2
        with pytest.raises(RuntimeError, match=ALREADY):
            torch._C._cuda_beginAllocateToPool(device, pool.id)
        assert pool.use_count() == 3
    assert pool.use_count() == 2
    torch._C._cuda_releasePool(device, pool.id)
    assert pool.use_count() == 1


def test_a_capture_begin_refused_for_a_recorded_pool_has_taken_a_use_of_it(torch_cuda: str) -> None:
    """A capture's begin is CUDA's ``beginAllocateToPool`` too: the use is taken before the refusal, and no end
    gives it back (torch's reset releases the pool only after an accepted end). The refused begin has run the
    generator's prologue (torch 2.11), so a clean capture ends that before the case returns."""
    pool, device, capturing = torch.cuda.MemPool(), torch.cuda.current_device(), torch.cuda.Stream()
    capturing.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.use_mem_pool(pool):
            with torch.cuda.stream(capturing), pytest.raises(RuntimeError, match=ALREADY):
                graph.capture_begin(pool=pool.id)
            assert pool.use_count() == 3
        del graph
        assert pool.use_count() == 2
        torch._C._cuda_releasePool(device, pool.id)
        assert pool.use_count() == 1
    finally:
        end_generator_capture("cuda")
