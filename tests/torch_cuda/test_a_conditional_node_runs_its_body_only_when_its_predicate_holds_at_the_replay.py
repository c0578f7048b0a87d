"""CUDA graphs' conditional nodes (``CUDAGraph.begin_capture_to_if_node`` / ``end_capture_to_conditional_node``, CUDA
>= 12.4), on both arms: a replay runs the body only when the predicate is true THEN; the body is captured on a stream
of its own, the earlier one current again after it; ``get_currently_capturing_graph()`` finds the graph; torch's
refusals in its words. torch's ``torch.cond`` inside CUDA graph trees goes this way
(``torch._higher_order_ops.cudagraph_conditional_nodes``). A CPU-only torch's emulation had none of these
(AttributeError)."""

from __future__ import annotations

import importlib.util

import pytest
import torch

NOT_CAPTURING = "The current stream is not currently capturing"
NOT_BEGUN = r"capture_begin\(\) must be called before begin_capture_to_if_node\(\)"
RNG_IN_BODY = "RNG within data-dependent conditional nodes is not supported yet"


def _has_conditional_nodes(arm: str) -> None:
    """A torch older than conditional nodes (the H100's 2.11) skips: on the cuda arm its ``CUDAGraph`` says so; on
    the emulated arm the torch's own module of them (the emulation follows the torch it runs on, and has them
    wherever that module is: no skip there for want of the emulation's methods)."""
    if arm == "cuda" and not hasattr(torch.cuda.CUDAGraph, "begin_capture_to_if_node"):
        pytest.skip("this torch's CUDAGraph has no conditional nodes")
    if arm != "cuda" and importlib.util.find_spec("torch._higher_order_ops.cudagraph_conditional_nodes") is None:
        pytest.skip("this torch has no conditional nodes (torch._higher_order_ops.cudagraph_conditional_nodes)")


def _replayed(graph: torch.cuda.CUDAGraph, tensor: torch.Tensor) -> list[float]:
    """``tensor``'s values after one replay of ``graph``."""
    graph.replay()
    torch.cuda.synchronize()
    return tensor.tolist()


def test_the_body_runs_at_a_replay_only_when_the_predicate_is_true_then(torch_cuda: str) -> None:
    _has_conditional_nodes(torch_cuda)
    x, y = torch.ones(4, device="cuda"), torch.zeros(4, device="cuda")
    pred = torch.tensor(True, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y.add_(1)
        graph.begin_capture_to_if_node(pred)
        y.add_(x * 10)
        graph.end_capture_to_conditional_node()
    torch.cuda.synchronize()
    assert y.tolist() == [0.0] * 4  # a capture runs nothing
    assert _replayed(graph, y) == [11.0] * 4
    pred.fill_(False)
    assert _replayed(graph, y) == [12.0] * 4
    pred.fill_(True)
    assert _replayed(graph, y) == [23.0] * 4


def test_the_body_is_captured_on_a_stream_of_its_own_and_finds_its_graph(torch_cuda: str) -> None:
    _has_conditional_nodes(torch_cuda)
    x = torch.ones(4, device="cuda")
    pred = torch.tensor(False, device="cuda")
    graph, seen = torch.cuda.CUDAGraph(), {}
    with torch.cuda.graph(graph):
        capturing = torch.cuda.current_stream()
        seen["graph"] = torch.cuda.CUDAGraph.get_currently_capturing_graph() is graph
        graph.begin_capture_to_if_node(pred)
        seen["body_stream_is_another"] = torch.cuda.current_stream() != capturing
        seen["body_capturing"] = torch.cuda.is_current_stream_capturing()
        seen["graph_in_body"] = torch.cuda.CUDAGraph.get_currently_capturing_graph() is graph
        out = x * 3
        graph.end_capture_to_conditional_node()
        seen["stream_back"] = torch.cuda.current_stream() == capturing
    assert seen == {"graph": True, "body_stream_is_another": True, "body_capturing": True, "graph_in_body": True,
                    "stream_back": True}
    out.zero_()
    assert _replayed(graph, out) == [0.0] * 4  # the predicate is false: the body does not write ``out``
    pred.fill_(True)
    assert _replayed(graph, out) == [3.0] * 4


def test_outside_a_capture_there_is_no_capturing_graph_and_no_if_node(torch_cuda: str) -> None:
    _has_conditional_nodes(torch_cuda)
    with pytest.raises(RuntimeError, match=NOT_CAPTURING):
        torch.cuda.CUDAGraph.get_currently_capturing_graph()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side), pytest.raises(RuntimeError, match=NOT_BEGUN):
        torch.cuda.CUDAGraph().begin_capture_to_if_node(torch.tensor(True, device="cuda"))


def test_nested_if_nodes_run_their_bodies_by_both_predicates(torch_cuda: str) -> None:
    _has_conditional_nodes(torch_cuda)
    y = torch.zeros(1, device="cuda")
    outer, inner = torch.tensor(True, device="cuda"), torch.tensor(True, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        graph.begin_capture_to_if_node(outer)
        y.add_(1)
        graph.begin_capture_to_if_node(inner)
        y.add_(10)
        graph.end_capture_to_conditional_node()
        graph.end_capture_to_conditional_node()
    got = []
    for o, i in ((True, True), (True, False), (False, True)):
        outer.fill_(o)
        inner.fill_(i)
        y.zero_()
        got.append(_replayed(graph, y))
    assert got == [[11.0], [1.0], [0.0]]


def test_a_random_draw_in_the_body_is_refused_at_its_end(torch_cuda: str) -> None:
    _has_conditional_nodes(torch_cuda)
    pred = torch.tensor(True, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError) as refused:
        with torch.cuda.graph(graph):
            graph.begin_capture_to_if_node(pred)
            torch.rand(4, device="cuda")
            graph.end_capture_to_conditional_node()
    chain, error = [], refused.value
    while error is not None:
        chain.append(str(error))
        error = error.__context__
    assert any(RNG_IN_BODY in message for message in chain), chain
