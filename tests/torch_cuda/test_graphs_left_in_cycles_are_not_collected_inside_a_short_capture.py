"""Graphs an earlier step left in reference cycles are not collected by Python's automatic collector inside a short
capture, on either arm: a GPU's capture keeps about one Python object per operation, so a capture of a hundred
operations never reaches the collector's threshold there.

The emulator's recorder keeps about twenty per operation, so its captures ran the collector ten times as often; it
collected such a graph mid-capture, whose release invalidates the capture as CUDA does (PyTorch's ``test_cuda.py`` in
file order: two ``make_graphed_callables`` cases passed on the H100 and failed emulated, session 24).
``seam/torch_cuda/gc_pace.py`` slows the first generation's threshold while a capture is open.
"""

from __future__ import annotations

import gc

import torch

from tests.torch_cuda.side_capture import captured


def _a_graph_in_a_cycle() -> None:
    graph, x = torch.cuda.CUDAGraph(), torch.ones(4, device="cuda")
    captured(graph, lambda: x.add_(1))
    cycle: list[object] = [graph]
    cycle.append(cycle)


def test_a_capture_of_a_hundred_operations_collects_no_graph_left_in_a_cycle(torch_cuda: str) -> None:
    gc.collect()  # the collector's counts start from nothing
    before = gc.get_threshold()
    for _ in range(3):
        _a_graph_in_a_cycle()
    graph, x = torch.cuda.CUDAGraph(), torch.ones(64, device="cuda")

    def body() -> torch.Tensor:
        y = x
        for _ in range(50):
            y = y * 1.5 + 1
        return y

    y = captured(graph, body)  # its end is refused, had a graph been released inside the capture
    graph.replay()
    torch.cuda.synchronize()
    assert y.shape == (64,)
    assert gc.get_threshold() == before
    gc.collect()
