"""``torch.cond`` on device tensors, on both arms: eagerly; captured by torch's own dispatch mode for CUDA graphs, one
conditional node a branch, whose replays follow the predicate's value then; and compiled with
``mode="reduce-overhead"``, where inductor makes no CUDA graph of it and says so. The emulated device once refused every
higher-order operator ("There was no rule registered for HigherOrderOperator cond and mode DeviceMode")."""

from __future__ import annotations

import importlib.util

import pytest
import torch


def _branches(pred: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.cond(pred, lambda x: x * 2, lambda x: x - 1, (x,))


def test_torch_cond_on_device_tensors_takes_the_branch_its_predicate_names(torch_cuda: str) -> None:
    x = torch.arange(4.0, device="cuda")
    taken = [_branches(torch.tensor(p, device="cuda"), x) for p in (True, False)]
    assert [t.device.type for t in taken] == ["cuda", "cuda"]
    assert [t.tolist() for t in taken] == [[0.0, 2.0, 4.0, 6.0], [-1.0, 0.0, 1.0, 2.0]]


def test_torch_cond_captured_as_conditional_nodes_replays_the_branch_of_the_predicate_then(torch_cuda: str) -> None:
    if torch_cuda == "cuda" and not hasattr(torch.cuda.CUDAGraph, "begin_capture_to_if_node"):
        pytest.skip("this torch's CUDAGraph has no conditional nodes")
    if importlib.util.find_spec("torch._higher_order_ops.cudagraph_conditional_nodes") is None:
        pytest.skip("this torch has no conditional nodes (torch._higher_order_ops.cudagraph_conditional_nodes)")
    from torch._higher_order_ops import cudagraph_conditional_nodes as nodes
    x, pred = torch.arange(4.0, device="cuda"), torch.tensor(True, device="cuda")
    with nodes.ControlFlowOpWarmupDispatchMode():  # as CUDA graph trees warm both branches up
        _branches(pred, x)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), nodes.CUDAGraphCaptureControlFlowOpDispatchMode():
        out = _branches(pred, x)
    got = []
    for p in (True, False, False, True):
        pred.fill_(p)
        graph.replay()
        torch.cuda.synchronize()
        got.append(out.tolist())
    assert got == [[0.0, 2.0, 4.0, 6.0], [-1.0, 0.0, 1.0, 2.0], [-1.0, 0.0, 1.0, 2.0], [0.0, 2.0, 4.0, 6.0]]


def test_torch_cond_compiled_with_reduce_overhead_runs_each_steps_branch_without_a_cuda_graph(torch_cuda: str) -> None:
    """Inductor makes no CUDA graph of a graph with ``torch.cond`` on device tensors ("skipping cudagraphs due to
    control flow operator: torch.cond."), counting the skip once; the branches run eagerly, each step's."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    skips = counters["inductor"]["cudagraph_skips"]
    compiled = torch.compile(_branches, mode="reduce-overhead")
    x = torch.arange(4.0, device="cuda")
    got = []
    for p in (True, True, False, True, False):
        torch.compiler.cudagraph_mark_step_begin()
        got.append(compiled(torch.tensor(p, device="cuda"), x).tolist())
    skipped = counters["inductor"]["cudagraph_skips"] - skips
    torch._dynamo.reset()
    two, minus = [0.0, 2.0, 4.0, 6.0], [-1.0, 0.0, 1.0, 2.0]
    assert got == [two, two, minus, two, minus]
    assert skipped == 1
