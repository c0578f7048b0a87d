"""On CUDA, a new buffer is made on the seam's queue and a graph's segments share its one memory pool.

- ``alloc`` makes the new buffer on the backend's default queue, whatever stream the caller is on:
  its memory belongs to that queue, so when it is freed while the queue still works on it, the
  caller's own stream is not handed that memory (made on the caller's stream, it would be, at once,
  and the queue's pending work would then write into the caller's next tensor);
- every segment of a PIECEWISE graph captures into the graph's one pool, so a temporary freed in
  one piece is reused by the next: six pieces with a 64 MiB temporary each reserve about one
  temporary, not six (vLLM shares one pool between its piecewise graphs for this reason);
- ``memory_kind`` names the three kinds of memory the capture checks tell apart.
"""

from __future__ import annotations

import pytest
import torch

from seam import BreakableGraph, CaptureMode, CudaBackend, GraphCaptureScope
from seam.cuda_backend import memory_kind

pytestmark = pytest.mark.arm("cuda")
MIB = 1 << 20


def test_a_buffer_freed_while_the_queue_still_works_on_it_is_not_handed_to_the_callers_stream() -> None:
    b = CudaBackend()
    q = b.default_queue()
    mine = torch.cuda.Stream(device=b.device)
    # CUDA loads a kernel's module at its first launch (lazy loading), and that load waits for the
    # device: the kernels of the race run once first, or the add would be ordered before the fill by
    # that wait (seen on the H200 at e9677fb: the defect this case is for passed it).
    torch.cuda._sleep(1)
    torch.full((4,), 7.0, device=b.device).add_(1)
    b.synchronize()
    with torch.cuda.stream(mine):
        buf = b.alloc((4 * MIB,))
    with b.use_queue(q):
        torch.cuda._sleep(400_000_000)  # about 0.2 s of the queue's time on an H200
        buf.add_(1)  # still pending when the buffer is freed
    del buf
    with torch.cuda.stream(mine):
        sevens = torch.full((4 * MIB,), 7.0, device=b.device)
    b.synchronize()
    assert torch.equal(sevens.cpu(), torch.full((4 * MIB,), 7.0)), "the queue's add wrote into the caller's tensor"


def test_the_pieces_of_a_piecewise_graph_share_one_pool_of_memory() -> None:
    b = CudaBackend()
    x = b.to_device(torch.ones(16 * MIB))  # 64 MiB of float32
    total = b.alloc((1,))
    b.synchronize()
    before = torch.cuda.memory_reserved(b.device)
    g = BreakableGraph(b, CaptureMode.PIECEWISE)
    with torch.no_grad(), GraphCaptureScope(b, b.default_queue(), g) as scope:
        for _ in range(6):
            total.add_((x * 2).sum())  # a 64 MiB temporary, freed inside its piece
            scope.break_point(lambda: None)
    grown = torch.cuda.memory_reserved(b.device) - before
    g.replay()
    b.synchronize()
    assert total.cpu().item() == 6 * 2 * 16 * MIB
    assert 64 * MIB <= grown < 3 * 64 * MIB, f"the graph reserved {grown / MIB:.0f} MiB for six 64 MiB temporaries"
    g.destroy()


def test_memory_kind_names_device_pinned_and_pageable_memory() -> None:
    assert memory_kind(torch.zeros(2, device="cuda")) == "device"
    assert memory_kind(torch.zeros(2).pin_memory()) == "pinned"
    assert memory_kind(torch.zeros(2)) == "pageable"
