"""A capture that CUDA refuses at its end (an unjoined fork) leaves the process's caching allocator as it was.

torch's ``CUDAGraph.capture_end`` raises at ``cudaStreamEndCapture`` before it tells the caching allocator that
the capture ended (torch 2.11), so the allocator counts a capture underway for the rest of the process: neither
``empty_cache()`` nor an out-of-memory retry releases a cached segment again. Found on the H200 (session 15):
after the fidelity corpus's unjoined-fork program ran in the same process, the memory-fraction tests failed.
``CudaBackend`` ends the allocator's capture itself when CUDA refuses the end. Both arms (the emulated device never
leaked it)."""

from __future__ import annotations

import pytest
import torch

from seam import Backend, BreakableGraph, CaptureMode, GraphCaptureScope, UnjoinedForkError


def test_after_an_unjoined_fork_is_refused_empty_cache_still_releases_a_freed_segment(backend: Backend) -> None:
    x = backend.to_device(torch.zeros(1))
    q, side = backend.default_queue(), backend.new_queue()
    graph = BreakableGraph(backend, CaptureMode.FULL)
    with pytest.raises(UnjoinedForkError):
        with GraphCaptureScope(backend, q, graph):
            backend.wait_event(side, backend.record_event(q))
            with backend.use_queue(side):
                x.add_(1)
            backend.wait_event(q, backend.record_event(side))
            with backend.use_queue(side):
                x.add_(1)  # after the join: the side stream is forked again, and never joined
    backend.synchronize()
    torch.cuda.empty_cache()
    before = torch.cuda.memory_reserved()
    block = torch.empty(96 << 20, dtype=torch.uint8, device="cuda")
    assert torch.cuda.memory_reserved() >= before + (96 << 20)
    del block
    torch.cuda.empty_cache()
    assert torch.cuda.memory_reserved() == before  # the freed segment went back
