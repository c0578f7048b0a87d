"""``torch.cuda._sleep(cycles)`` queues a spin kernel on the current stream and returns at once.

PyTorch's own graph tests (``test_graph_concurrent_replay``, ``test_graph_record_stream``) and many
stream-ordering tests use it to hold a stream busy; inside a capture it is one more captured kernel.
On the emulated device nothing runs concurrently, so it has nothing to wait for: it must return,
in and out of a capture, and leave the capture replayable.
"""

from __future__ import annotations

import torch


def test_sleep_returns_outside_a_capture_and_inside_one(torch_cuda: str) -> None:
    x = torch.ones(4, device="cuda")
    torch.cuda._sleep(1000)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(side):
        g.capture_begin()
        torch.cuda._sleep(1000)
        x.add_(1)
        g.capture_end()
    torch.cuda.current_stream().wait_stream(side)
    g.replay()
    g.replay()
    torch.cuda.synchronize()
    assert x.tolist() == [3.0, 3.0, 3.0, 3.0]
