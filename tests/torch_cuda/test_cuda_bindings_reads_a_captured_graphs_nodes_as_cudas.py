"""cuda-python's runtime bindings read a kept graph's nodes and its executable, on both arms.

A captured ``z = x + y`` is one kernel node, a copy between two contiguous tensors of one dtype one memcpy node
(torch's ``cudaMemcpyAsync``), an ``empty`` none; the executable was instantiated with torch's flags. On a CPU the
bindings are the emulation's stand-in (``seam/torch_cuda/cuda_bindings.py``), found only inside ``emulate_cuda()``
and only where no cuda-python is installed; on the H200 they are NVIDIA's package (PyTorch's own
``test_cuda_graph_raw_graph*`` are the probe's cases of this: docs/torch-cuda.md).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

from seam.torch_cuda import emulate_cuda, is_emulating

#: What cudaGraphExecGetFlags reports for a graph torch instantiated: auto-free on launch (the H200, session 20).
TORCHS_FLAGS = 1


def _runtime(arm: str):  # type: ignore[no-untyped-def]
    """The bindings: on the emulated arm always there (the stand-in, or an installed package); on the GPU NVIDIA's."""
    if arm == "cuda":
        # not run is owed, not skipped: the harness counts a skip whose reason starts "OWED:" as owed
        return pytest.importorskip("cuda.bindings.runtime",
                                   reason="OWED: the cuda arm needs cuda-python (cuda-bindings) beside the GPU")
    return importlib.import_module("cuda.bindings.runtime")


def _nodes(cudart, g: torch.cuda.CUDAGraph) -> list[object]:  # type: ignore[no-untyped-def]
    """The types of the graph's nodes, in order; its one root (a chain captured on one stream) is its first node.
    Asked for no nodes (no count given), a listing is an empty list and the count (cuda-bindings 13.3.1 on the H200:
    evidence/h200-device-calls-2026-12-05-session20.txt)."""
    raw = cudart.cudaGraph_t(init_value=g.raw_cuda_graph())
    err, none, count = cudart.cudaGraphGetNodes(raw)
    assert err == cudart.cudaError_t.cudaSuccess and none == []
    err, nodes, again = cudart.cudaGraphGetNodes(raw, count)
    assert err == cudart.cudaError_t.cudaSuccess and again == count == len(nodes)
    err, padded, again = cudart.cudaGraphGetNodes(raw, count + 2)  # asked for more: filled up with null nodes
    assert err == cudart.cudaError_t.cudaSuccess and again == count and padded[:count] == nodes
    assert [int(n) for n in padded[count:]] == [0, 0]
    err, none, roots = cudart.cudaGraphGetRootNodes(raw)
    assert err == cudart.cudaError_t.cudaSuccess and none == [] and roots == 1
    err, (root,), roots = cudart.cudaGraphGetRootNodes(raw, roots)
    assert err == cudart.cudaError_t.cudaSuccess and int(root) == int(nodes[0])
    types = []
    for node in nodes:
        err, kind = cudart.cudaGraphNodeGetType(node)
        assert err == cudart.cudaError_t.cudaSuccess
        types.append(kind)
    return types


def test_an_addition_is_one_kernel_node_and_the_executable_has_torchs_flags(torch_cuda: str) -> None:
    cudart = _runtime(torch_cuda)
    x, y = torch.zeros(2000, device="cuda"), torch.ones(2000, device="cuda")
    g = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(g, capture_error_mode="relaxed"):
        z = x + y
    assert _nodes(cudart, g) == [cudart.cudaGraphNodeType.cudaGraphNodeTypeKernel]
    g.instantiate()
    err, flags = cudart.cudaGraphExecGetFlags(cudart.cudaGraphExec_t(init_value=g.raw_cuda_graph_exec()))
    assert err == cudart.cudaError_t.cudaSuccess and int(flags) == TORCHS_FLAGS
    g.replay()
    assert z[:3].tolist() == [1.0, 1.0, 1.0]


def test_a_contiguous_copy_is_a_memcpy_node_and_an_allocation_no_node(torch_cuda: str) -> None:
    cudart = _runtime(torch_cuda)
    src = torch.arange(64, dtype=torch.float32, device="cuda")
    g = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(g, capture_error_mode="relaxed"):
        dst = torch.empty(64, device="cuda")
        dst.copy_(src)
        twice = dst * 2
    assert _nodes(cudart, g) == [cudart.cudaGraphNodeType.cudaGraphNodeTypeMemcpy,
                                 cudart.cudaGraphNodeType.cudaGraphNodeTypeKernel]
    src.fill_(1.0)
    g.replay()
    assert twice[:2].tolist() == [2.0, 2.0]


@pytest.mark.parametrize("body, types", [
    (lambda src: src.clone(), ["Memcpy"]),
    (lambda src: torch.empty(64, device="cuda", dtype=torch.float16).copy_(src), ["Kernel"]),  # a dtype change
    (lambda src: torch.empty(8, 8, device="cuda").copy_(src.view(8, 8).t()), ["Kernel"]),  # a transposed read
    (lambda src: torch.zeros(64, device="cuda"), ["Kernel"]),
    (lambda src: src.view(8, 8) @ src.view(8, 8), ["Kernel"]),  # cuBLAS: one kernel node
], ids=["clone", "copy-dtype", "copy-transposed", "zeros", "mm"])
def test_what_node_an_operation_is_as_the_h200_says(torch_cuda: str, body: Any, types: list[str]) -> None:
    cudart = _runtime(torch_cuda)
    src = torch.arange(64, dtype=torch.float32, device="cuda")
    src.view(8, 8) @ src.view(8, 8)  # the thread's cuBLAS handle, before the capture
    g = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(g, capture_error_mode="relaxed"):
        body(src)
    kinds = cudart.cudaGraphNodeType
    assert _nodes(cudart, g) == [getattr(kinds, f"cudaGraphNodeType{t}") for t in types]


def _outside() -> None:
    if is_emulating():
        pytest.skip("the whole process is emulated (SEAM_EMULATE_CUDA=1): it has no outside to compare")
    if importlib.machinery.PathFinder.find_spec("cuda") is not None:  # on sys.path: not a stand-in left behind
        pytest.skip("a package named cuda is installed here: the stand-in is never found")


def test_the_stand_in_is_found_only_inside_the_emulation_and_leaves_with_it() -> None:
    _outside()
    with emulate_cuda():
        runtime = importlib.import_module("cuda.bindings.runtime")
        assert runtime.__seamgate_stand_in__ and importlib.util.find_spec("cuda.bindings") is not None
        assert runtime.cudaGetDeviceCount() == (runtime.cudaError_t.cudaSuccess, 1)
    assert importlib.util.find_spec("cuda") is None
    assert not [name for name in sys.modules if name == "cuda" or name.startswith("cuda.")]


def test_an_unknown_handle_is_cudas_invalid_value_and_names_its_error() -> None:
    _outside()
    with emulate_cuda():
        import cuda.bindings.runtime as cudart

        invalid = cudart.cudaError_t.cudaErrorInvalidValue
        assert cudart.cudaGraphGetNodes(cudart.cudaGraph_t(init_value=0x1234)) == (invalid, None, None)
        assert cudart.cudaGraphGetRootNodes(cudart.cudaGraph_t(init_value=0)) == (invalid, None, None)
        assert cudart.cudaGraphNodeGetType(cudart.cudaGraphNode_t(init_value=0x1234)) == (invalid, None)
        assert cudart.cudaGraphExecGetFlags(cudart.cudaGraphExec_t(init_value=0x1234)) == (invalid, None)
        assert cudart.cudaGetErrorName(invalid) == (cudart.cudaError_t.cudaSuccess, b"cudaErrorInvalidValue")
        assert cudart.cudaGetErrorString(invalid) == (cudart.cudaError_t.cudaSuccess, b"invalid argument")


def test_a_handle_is_its_value_as_cuda_pythons_are() -> None:
    """Two handles of one kind made from one address are equal and hash alike; of two kinds, or two addresses, not."""
    _outside()
    with emulate_cuda():
        import cuda.bindings.runtime as cudart

        node = cudart.cudaGraphNode_t(init_value=0x10)
        same = cudart.cudaGraphNode_t(init_value=0x10)
        assert node == same and len({node, same}) == 1
        assert node != cudart.cudaGraphNode_t(init_value=0x20) and node != cudart.cudaGraph_t(init_value=0x10)
        assert int(node) == 0x10 and repr(node) == "<CUgraphNode 0x10>"  # the driver type's name, as on the H200


@pytest.mark.parametrize("imported_before", [True, False], ids=["imported-before", "imported-inside"])
def test_an_installed_cuda_python_keeps_its_packages_and_its_runtime_answers_for_the_emulated_device(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, imported_before: bool) -> None:
    """PyPI's CUDA builds of torch install cuda-python, so a CI machine without a GPU has it, and its runtime answers
    cudaErrorInsufficientDriver there: inside the emulation its runtime module is the stand-in, its packages and
    other modules stay its own, and the emulation's end puts its runtime back."""
    _outside()
    package = tmp_path / "cuda" / "bindings"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("INSTALLED = True\n")
    (package / "runtime.py").write_text("INSTALLED = True\n")
    (package / "driver.py").write_text("INSTALLED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        real = importlib.import_module("cuda.bindings.runtime") if imported_before else None
        with emulate_cuda():
            import cuda.bindings
            import cuda.bindings.driver
            import cuda.bindings.runtime as cudart

            assert cudart.__seamgate_stand_in__ and not hasattr(cudart, "INSTALLED")
            assert cudart.cudaGetDeviceCount() == (cudart.cudaError_t.cudaSuccess, 1)
            assert cuda.bindings.INSTALLED and cuda.bindings.driver.INSTALLED
        after = importlib.import_module("cuda.bindings.runtime")
        assert after.INSTALLED and not hasattr(after, "__seamgate_stand_in__")
        assert sys.modules["cuda.bindings"].runtime is after
        if real is not None:
            assert after is real
    finally:
        for name in [n for n in sys.modules if n == "cuda" or n.startswith("cuda.")]:
            del sys.modules[name]
