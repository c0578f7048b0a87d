"""A capture CUDA refuses at its end leaves its pool recorded to, and a pool recorded to keeps the default cache.

torch's ``CUDAGraph::capture_end`` checks ``cudaStreamEndCapture``'s answer BEFORE it calls the caching allocator's
``endAllocateToPool`` (torch 2.11 and later), so an end CUDA refuses (a fork never joined, a capture invalidated by a
host wait) leaves the capture's entry in the allocator's ``captures_underway`` for the rest of the process: a later
capture or ``use_mem_pool`` of that pool is refused ("beginAllocateToPool: already recording to mempool_id"), and
``release_cached_blocks`` frees no default-pool segment while any entry is there, so ``empty_cache()`` and the
out-of-memory retry release nothing (H200, session 15: the memory-fraction tests failed after an unjoined fork;
``docs/torch-cuda.md``, known gaps). The same rule holds inside ``use_mem_pool``. Only
``torch._C._cuda_endAllocateToPool`` ends the entry by hand (``seam.cuda_backend`` does so after a refused end). The
emulated device ended the entry with any end, and released the default cache inside ``use_mem_pool``.
(c10/cuda/CUDACachingAllocator.cpp: ``release_cached_blocks``; aten/src/ATen/cuda/CUDAGraph.cpp: ``capture_end``.)
Each refused case ends the entry and the generator's capture by hand, so the process is left as it was found."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable

import pytest
import torch

from seam.cuda_backend import end_generator_capture
from tests.torch_cuda.side_capture import captured

# The caching allocator's figures: on the cuda arm in a process of their own (conftest.py).
pytestmark = pytest.mark.own_process

ALREADY = "^beginAllocateToPool: already recording to mempool_id"
NOT_RECORDING = "^endAllocatePool: not currently recording to mempool_id"
SEGMENT = 96 << 20  # a large segment of its own


def _cached_after_a_freed_segment() -> int:
    """Bytes still reserved after a freed segment of ``SEGMENT`` bytes and ``empty_cache()`` (0: released). The
    collector runs first: a refused capture's objects in reference cycles, freed by an automatic collection between
    the two figures, gave back a small segment that the second ``empty_cache()`` released (-2 MiB: the emulated arm
    on the H100, session 29)."""
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    before = torch.cuda.memory_reserved()
    block = torch.empty(SEGMENT, dtype=torch.uint8, device="cuda")
    assert torch.cuda.memory_reserved() - before >= SEGMENT
    del block
    torch.cuda.empty_cache()
    return torch.cuda.memory_reserved() - before


def _refused_for_an_unjoined_fork(pool: tuple[int, int]) -> None:
    graph, capturing, side = torch.cuda.CUDAGraph(), torch.cuda.Stream(), torch.cuda.Stream()
    x = torch.zeros(4, device="cuda")
    capturing.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(capturing):
        graph.capture_begin(pool=pool)
        side.wait_stream(capturing)  # a fork into the capture ...
        with torch.cuda.stream(side):
            x.add_(1)  # ... never joined back
        with pytest.raises(RuntimeError, match="unjoined"):
            graph.capture_end()


def _refused_after_a_host_wait(pool: tuple[int, int]) -> None:
    graph, capturing = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    x = torch.ones(4, device="cuda")
    capturing.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(capturing):
        graph.capture_begin(pool=pool)
        with pytest.raises(RuntimeError, match="operation not permitted when stream is capturing"):
            x.sum().item()  # invalidates the capture
        with pytest.raises(RuntimeError, match="operation failed due to a previous error during capture"):
            graph.capture_end()


REFUSED: dict[str, Callable[[tuple[int, int]], None]] = {"unjoined_fork": _refused_for_an_unjoined_fork,
                                                         "host_wait": _refused_after_a_host_wait}


def test_inside_use_mem_pool_empty_cache_releases_no_default_segment(torch_cuda: str) -> None:
    assert _cached_after_a_freed_segment() == 0
    before = torch.cuda.memory_reserved()
    with torch.cuda.use_mem_pool(torch.cuda.MemPool()):
        block = _default_pool_block_made_in_another_thread()
        del block
        torch.cuda.empty_cache()
        kept = torch.cuda.memory_reserved() - before
    torch.cuda.empty_cache()
    assert (kept >= SEGMENT, torch.cuda.memory_reserved() - before) == (True, 0)  # kept while an entry records


def _default_pool_block_made_in_another_thread() -> torch.Tensor:
    """A SEGMENT-byte block of the default pool (``use_mem_pool`` takes this thread's blocks only)."""
    made: list[torch.Tensor] = []
    thread = threading.Thread(target=lambda: made.append(torch.empty(SEGMENT, dtype=torch.uint8, device="cuda")))
    thread.start()
    thread.join()
    return made[0]


@pytest.mark.parametrize("refusal", sorted(REFUSED))
def test_after_a_refused_end_the_pool_stays_recorded_to_until_its_entry_is_ended(torch_cuda: str,
                                                                                 refusal: str) -> None:
    assert _cached_after_a_freed_segment() == 0
    pool, device = torch.cuda.graph_pool_handle(), torch.cuda.current_device()
    try:
        REFUSED[refusal](pool)
        assert _cached_after_a_freed_segment() >= SEGMENT  # the entry keeps the default cache
        again, capturing = torch.cuda.CUDAGraph(), torch.cuda.Stream()
        capturing.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(capturing), pytest.raises(RuntimeError, match=ALREADY):
            again.capture_begin(pool=pool)
        torch._C._cuda_endAllocateToPool(device, pool)  # the refused capture's entry: there to end
        with pytest.raises(RuntimeError, match=NOT_RECORDING):
            torch._C._cuda_endAllocateToPool(device, pool)
        torch.cuda.empty_cache()
        assert _cached_after_a_freed_segment() == 0
    finally:
        end_generator_capture("cuda")  # torch 2.11 leaves it capturing after a refused end


def test_a_graph_captures_again_into_a_new_pool_after_a_refused_end(torch_cuda: str) -> None:
    """A capture begun with no pool takes a new one each time (torch's ``capture_begin``: ``graph_pool_handle``), so
    the graph whose capture into ``pool`` was refused captures again at once, though ``pool`` stays recorded to."""
    pool, device = torch.cuda.graph_pool_handle(), torch.cuda.current_device()
    graph, capturing, side = torch.cuda.CUDAGraph(), torch.cuda.Stream(), torch.cuda.Stream()
    x = torch.ones(4, device="cuda")
    capturing.wait_stream(torch.cuda.current_stream())
    try:
        with torch.cuda.stream(capturing):
            graph.capture_begin(pool=pool)
            side.wait_stream(capturing)
            with torch.cuda.stream(side):
                x.mul_(3)  # never joined back
            with pytest.raises(RuntimeError, match="unjoined"):
                graph.capture_end()
            graph.capture_begin()
            y = x * 2
            graph.capture_end()
        torch.cuda.current_stream().wait_stream(capturing)
        x.fill_(5)
        graph.replay()
        first = graph.pool()
        graph.reset()
        with torch.cuda.stream(capturing):
            graph.capture_begin()
            graph.capture_end()
        assert (y.tolist(), first != pool, graph.pool() != first) == ([10.0] * 4, True, True)
    finally:
        torch._C._cuda_endAllocateToPool(device, pool)
        end_generator_capture("cuda")  # torch 2.11 leaves it capturing after a refused end


@pytest.mark.parametrize("mode", ["global", "relaxed", "thread_local"])
def test_empty_cache_in_a_capture_refuses_to_free_a_freeable_pools_segment_unless_relaxed(torch_cuda: str,
                                                                                         mode: str) -> None:
    """``empty_cache()`` inside a capture releases the segments of private pools no graph uses any more: a
    ``cudaFree``, an unsafe call that a global or thread-local capture refuses ("operation not permitted when stream
    is capturing", the capture invalidated), and a relaxed one allows (H100, session 29: a thread-local capture)."""
    x, device = torch.ones(1 << 20, device="cuda"), torch.cuda.current_device()
    freeable = torch.cuda.graph_pool_handle()
    out = captured(torch.cuda.CUDAGraph(), lambda: x * 2, pool=freeable)  # the graph is gone: its pool freeable
    pool, graph, capturing = torch.cuda.graph_pool_handle(), torch.cuda.CUDAGraph(), torch.cuda.Stream()
    capturing.wait_stream(torch.cuda.current_stream())
    torch.cuda.synchronize()
    try:
        with torch.cuda.stream(capturing):
            graph.capture_begin(pool=pool, capture_error_mode=mode)
            del out  # the freeable pool's segment is wholly free now
            if mode == "relaxed":
                torch.cuda.empty_cache()
                graph.capture_end()
            else:
                try:
                    with pytest.raises(RuntimeError, match="operation not permitted when stream is capturing"):
                        torch.cuda.empty_cache()
                finally:  # the capture ends whatever was asserted
                    with pytest.raises(RuntimeError, match="operation failed due to a previous error during capture"):
                        graph.capture_end()
                torch._C._cuda_endAllocateToPool(device, pool)  # the refused end's entry
        pools = {tuple(segment["segment_pool_id"]) for segment in torch.cuda.memory_snapshot()}
        assert (freeable in pools) == (mode != "relaxed")
    finally:
        end_generator_capture("cuda")  # torch 2.11 leaves it capturing after a refused end
