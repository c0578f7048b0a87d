"""An event made with ``external=True`` and recorded inside a capture is a node of the graph: each
replay records it, so timing events around captured work measure the replay (PyTorch's
``test_graph_timing``; engines time their graphs this way). An event recorded in a capture without
``external`` only orders work inside the capture, and has no time.
"""

from __future__ import annotations

import torch


def test_timing_events_recorded_in_a_capture_time_its_replay(torch_cuda: str) -> None:
    x = torch.ones(1024, device="cuda")
    start = torch.cuda.Event(enable_timing=True, external=True)
    end = torch.cuda.Event(enable_timing=True, external=True)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        start.record()
        y = x * 2
        end.record()
    g.replay()
    torch.cuda.synchronize()
    elapsed = start.elapsed_time(end)
    assert isinstance(elapsed, float) and elapsed >= 0.0
    assert y.sum().item() == 2048.0
