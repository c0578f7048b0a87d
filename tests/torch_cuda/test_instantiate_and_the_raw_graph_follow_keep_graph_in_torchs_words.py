"""``CUDAGraph(keep_graph=...)`` decides who instantiates the graph, and whether its raw graph is kept.

``keep_graph=False`` (the default): ``capture_end`` instantiates, and the user's ``instantiate()`` or
``raw_cuda_graph()`` are refused. ``keep_graph=True``: the user may instantiate (again), the first
replay instantiates if they did not, and ``raw_cuda_graph_exec()`` exists once instantiated.
``debug_dump`` writes a kept graph as DOT; the debug mode is the process's, and a graph not kept is never written.
The words are torch's (``aten/src/ATen/cuda/CUDAGraph.cpp``); PyTorch's own
``test_cuda_graph_raw_graph_keep_graph_false`` and ``test_graph_debugdump`` check them.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import torch


def _capture(g: torch.cuda.CUDAGraph, x: torch.Tensor) -> torch.Tensor:
    with torch.cuda.graph(g, capture_error_mode="relaxed"):
        y = x + 1
    return y


def test_a_graph_not_kept_refuses_the_users_instantiate_and_its_raw_graph(torch_cuda: str) -> None:
    g = torch.cuda.CUDAGraph(keep_graph=False)
    y = _capture(g, torch.zeros(4, device="cuda"))
    with pytest.raises(RuntimeError, match=r"instantiate\(\) is intended to be called by the user only when keep_graph=true"):
        g.instantiate()
    with pytest.raises(RuntimeError, match=r"You cannot access the raw cudaGraph_t instance unless CUDAGraph was "
                                           r"initialized with keep_graph=true"):
        g.raw_cuda_graph()
    g.replay()
    assert y.tolist() == [1.0, 1.0, 1.0, 1.0]


def test_a_kept_graph_is_instantiated_by_the_user_or_by_its_first_replay(torch_cuda: str) -> None:
    x = torch.zeros(4, device="cuda")
    g = torch.cuda.CUDAGraph(keep_graph=True)
    with pytest.raises(RuntimeError, match=r"capture_end\(\) must have been called before calling instantiate"):
        g.instantiate()
    with torch.cuda.graph(g, capture_error_mode="relaxed"):
        x.add_(1)
    assert isinstance(g.raw_cuda_graph(), int)
    with pytest.raises(RuntimeError, match=r"You cannot access the raw cudaGraphExec_t instance until instantiate\(\) "
                                           r"has been called"):
        g.raw_cuda_graph_exec()
    g.replay()  # instantiates
    assert isinstance(g.raw_cuda_graph_exec(), int)
    g.instantiate()  # again: allowed for a kept graph
    g.replay()
    assert x.tolist() == [2.0, 2.0, 2.0, 2.0]


def test_debug_dump_writes_a_kept_graph_and_the_debug_mode_holds_for_every_graph(torch_cuda: str,
                                                                                 tmp_path: Path) -> None:
    """torch's C++ (CUDAGraph.cpp): the debug mode is one flag of the process, and only a graph that still holds
    its ``cudaGraph_t`` is written, which a graph not kept gave up when capture_end instantiated it (the H200,
    torch 2.11: a debugged graph not kept warns and writes nothing). On the cuda arm the flag stays on for the
    rest of the process, as torch leaves it: the first check holds only where no earlier case enabled it."""
    x = torch.zeros(4, device="cuda")
    plain = torch.cuda.CUDAGraph()
    _capture(plain, x)
    with pytest.warns(UserWarning, match=r"CUDA Graphs debug not enabled, set with \[graph\].enable_debug_mode\(\)"):
        plain.debug_dump(str(tmp_path / "plain.dot"))
    assert not (tmp_path / "plain.dot").exists()

    debugged = torch.cuda.CUDAGraph()
    debugged.enable_debug_mode()
    _capture(debugged, x)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        debugged.debug_dump(str(tmp_path / "debugged.dot"))
        plain.debug_dump(str(tmp_path / "plain.dot"))  # the mode is the process's now, not the graph's
    assert [str(w.message).startswith("DEBUG: calling debug_dump()") for w in said] == [True, True]
    assert not (tmp_path / "debugged.dot").exists() and not (tmp_path / "plain.dot").exists()

    kept = torch.cuda.CUDAGraph(keep_graph=True)
    _capture(kept, x)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        kept.debug_dump(str(tmp_path / "kept.dot"))
        kept.debug_dump(str(tmp_path / "again.dot"))  # a kept graph keeps its cudaGraph_t after a dump
    assert sum(str(w.message).startswith("DEBUG: calling cudaGraphDebugDotPrint() with") for w in said) == 2
    assert (tmp_path / "kept.dot").read_text().startswith("digraph")
    assert (tmp_path / "again.dot").read_text().startswith("digraph")
