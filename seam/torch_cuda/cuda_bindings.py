"""cuda-python's runtime bindings (``cuda.bindings.runtime``) over the emulated device: its graphs, read as CUDA's.

Code that inspects a captured graph goes below torch: ``graph.raw_cuda_graph()`` handed to
``cudart.cudaGraphGetNodes`` and ``cudaGraphNodeGetType``, ``graph.raw_cuda_graph_exec()`` to
``cudaGraphExecGetFlags`` (PyTorch's own ``test_cuda_graph_raw_graph*``). On a machine without the package (every
CPU-only CI), such code skipped or failed where the H200 ran it. Inside ``emulate_cuda()``, where ``import
cuda.bindings`` finds no installed package, it finds this module's stand-in (``STAND_IN``: the packages ``cuda`` and
``cuda.bindings`` and the module ``cuda.bindings.runtime``), which answers for the emulated device in cuda-python's
shapes: each call returns a tuple whose first item is a ``cudaError_t``, then its outputs; handles are
``cudaGraph_t(init_value=...)`` and the like. Leaving the emulation takes the stand-in out of ``sys.modules``.

An installed cuda-python (PyPI's CUDA builds of torch depend on it, so a CI machine without a GPU has it) keeps its
packages ``cuda`` and ``cuda.bindings`` and their other modules, but inside the emulation its ``runtime`` module is the
stand-in: the CUDA device there is the emulated one, whose graphs the real runtime cannot read (it answered
``cudaErrorInsufficientDriver`` on such a machine, and would be handed a handle that is no CUDA graph on a machine
with a GPU). A real ``cuda.bindings.runtime`` imported before is put back on the way out; a name bound to it
before the emulation keeps it.

What a graph's nodes are, a model (``node_type``): each recorded operation that computes is one kernel node; a copy
or a clone between tensors of one dtype, both contiguous, one memcpy node (torch's copy calls ``cudaMemcpyAsync``
there); an allocation (``empty``) none, and a view is never recorded. The H200 (session 20) confirms each: ``x + y``
one kernel node, ``x * 2 + 1`` two, a contiguous ``copy_`` or ``clone`` one memcpy node, a copy that changes the
dtype or reads a transposed tensor one kernel node, ``zeros`` and ``fill_`` one kernel node, ``empty`` none, and a
64 x 64 ``mm`` (cuBLAS) one kernel node. The nodes of a graph captured on one stream form a chain, as the
emulator's ``debug_dump`` draws them.

Worked example (inside ``emulate_cuda()``, the package not installed)::

    import cuda.bindings.runtime as cudart
    g = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(g):
        z = x + y
    err, _, count = cudart.cudaGraphGetNodes(cudart.cudaGraph_t(init_value=g.raw_cuda_graph()))
    # err == cudart.cudaError_t.cudaSuccess, count == 1
"""

from __future__ import annotations

import enum
import importlib.abc
import importlib.machinery
import itertools
import sys
import types
import weakref
from typing import Any

import torch

#: The names the stand-in provides, outermost first.
STAND_IN = ("cuda", "cuda.bindings", "cuda.bindings.runtime")
#: What ``cudaGraphExecGetFlags`` reports for an executable torch instantiated: auto-free on launch (1), as the H200
#: reports it (cuda-bindings 13.3.1, torch 2.11: evidence/h200-device-calls-2026-12-05-session20.txt).
INSTANTIATE_FLAGS = 1


class cudaError_t(enum.IntEnum):  # noqa: N801 (cuda-python's names)
    cudaSuccess = 0
    cudaErrorInvalidValue = 1
    cudaErrorInvalidDevice = 101
    cudaErrorInvalidResourceHandle = 400


class cudaGraphNodeType(enum.IntEnum):  # noqa: N801
    cudaGraphNodeTypeKernel = 0
    cudaGraphNodeTypeMemcpy = 1
    cudaGraphNodeTypeMemset = 2
    cudaGraphNodeTypeHost = 3
    cudaGraphNodeTypeGraph = 4
    cudaGraphNodeTypeEmpty = 5
    cudaGraphNodeTypeWaitEvent = 6
    cudaGraphNodeTypeEventRecord = 7
    cudaGraphNodeTypeExtSemaphoreSignal = 8
    cudaGraphNodeTypeExtSemaphoreWait = 9
    cudaGraphNodeTypeMemAlloc = 10
    cudaGraphNodeTypeMemFree = 11
    cudaGraphNodeTypeConditional = 13


_MESSAGES = {cudaError_t.cudaSuccess: "no error", cudaError_t.cudaErrorInvalidValue: "invalid argument",
             cudaError_t.cudaErrorInvalidDevice: "invalid device ordinal",
             cudaError_t.cudaErrorInvalidResourceHandle: "invalid resource handle"}


class _Handle:
    """A CUDA handle as cuda-python wraps one: made from an address (``init_value``), read back by ``int()``."""

    def __init__(self, init_value: int = 0, _ptr: int = 0) -> None:
        self._value = int(init_value or _ptr or 0)

    def __int__(self) -> int:
        return self._value

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and int(other) == self._value  # type: ignore[call-overload]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._value))

    def __repr__(self) -> str:
        return f"<{self._driver_name} 0x{self._value:x}>"

    #: cuda-python prints a runtime handle by its driver type's name (H200: ``<CUgraphNode 0x433b7ac0>``).
    _driver_name = "CUhandle"


class cudaGraph_t(_Handle):  # noqa: N801
    _driver_name = "CUgraph"


class cudaGraphExec_t(_Handle):  # noqa: N801
    _driver_name = "CUgraphExec"


class cudaGraphNode_t(_Handle):  # noqa: N801
    _driver_name = "CUgraphNode"


#: Kept graphs by the handle ``raw_cuda_graph()`` gave, and by the one ``raw_cuda_graph_exec()`` gave.
_GRAPHS: "weakref.WeakValueDictionary[int, Any]" = weakref.WeakValueDictionary()
_EXECS: "weakref.WeakValueDictionary[int, Any]" = weakref.WeakValueDictionary()
#: Each node handed out, by its value (values never repeat); a node lives as long as its graph's list of nodes.
_NODES: "weakref.WeakValueDictionary[int, _Node]" = weakref.WeakValueDictionary()
_NODE_VALUES = itertools.count(0x7E000000)


class _Node:
    """A node of one graph: held by the graph (``_nodes_of``), so a node outlives no graph."""

    def __init__(self, value: int, node_type: cudaGraphNodeType) -> None:
        self.value, self.node_type = value, node_type


def register_graph(handle: int, graph: Any) -> None:
    """``CUDAGraph.raw_cuda_graph`` gave ``handle`` for ``graph`` (an ``EmulatedGraph``)."""
    _GRAPHS[handle] = graph


def register_exec(handle: int, graph: Any) -> None:
    """``CUDAGraph.raw_cuda_graph_exec`` gave ``handle`` for ``graph``'s executable."""
    _EXECS[handle] = graph


def node_type(op: Any) -> cudaGraphNodeType | None:
    """The node a recorded operation is in a CUDA graph (None: no node)."""
    name = getattr(op.func, "__name__", str(op.func))
    if name == "cudaGraphNodeTypeConditional":  # ``conditional.IfNode``
        return cudaGraphNodeType.cudaGraphNodeTypeConditional
    if name.startswith(("empty", "new_empty")):
        return None
    if name.split(".")[0] in ("copy_", "_copy_from", "_to_copy", "clone") and _memcpy_eligible(op):
        return cudaGraphNodeType.cudaGraphNodeTypeMemcpy
    return cudaGraphNodeType.cudaGraphNodeTypeKernel


def _memcpy_eligible(op: Any) -> bool:
    tensors = [t for t in (*op.args[:2], *op.outputs) if isinstance(t, torch.Tensor)]
    return bool(tensors) and len({t.dtype for t in tensors}) == 1 and all(t.is_contiguous() for t in tensors)


def _nodes_of(graph: Any) -> list[_Node]:
    nodes = graph.__dict__.get("_cuda_nodes")
    if nodes is None:
        nodes = []
        for op in graph.ops:
            kind = node_type(op)
            if kind is not None:
                node = _Node(next(_NODE_VALUES), kind)
                _NODES[node.value] = node
                nodes.append(node)
        graph.__dict__["_cuda_nodes"] = nodes
    return nodes


def _graph(handle: Any, table: "weakref.WeakValueDictionary[int, Any]") -> Any:
    try:
        return table.get(int(handle))
    except (TypeError, ValueError):
        return None


def _listed(graph: Any, asked: int, roots: bool) -> tuple[Any, ...]:
    """cuda-python's listing shape, as cuda-bindings 13.3.1 gives it on the H200: (error, ``asked`` nodes, how many
    there are), the list cut to ``asked`` or filled up to it with null nodes (asked for none, an empty list); an
    unknown graph (error, None, None). The roots of a chain are its first node."""
    found = _graph(graph, _GRAPHS)
    if found is None:
        return cudaError_t.cudaErrorInvalidValue, None, None
    nodes = _nodes_of(found)[:1] if roots else _nodes_of(found)
    listed = [cudaGraphNode_t(init_value=n.value) for n in nodes[:asked]]
    return cudaError_t.cudaSuccess, listed + [cudaGraphNode_t(init_value=0)] * (asked - len(listed)), len(nodes)


def cudaGraphGetNodes(graph: Any, numNodes: int = 0) -> tuple[Any, ...]:  # noqa: N802,N803
    return _listed(graph, numNodes, roots=False)


def cudaGraphGetRootNodes(graph: Any, pNumRootNodes: int = 0) -> tuple[Any, ...]:  # noqa: N802,N803
    return _listed(graph, pNumRootNodes, roots=True)


def cudaGraphNodeGetType(node: Any) -> tuple[Any, ...]:  # noqa: N802
    try:
        found = _NODES.get(int(node))
    except (TypeError, ValueError):
        found = None
    if found is None:
        return cudaError_t.cudaErrorInvalidValue, None
    return cudaError_t.cudaSuccess, found.node_type


def cudaGraphExecGetFlags(graphExec: Any) -> tuple[Any, ...]:  # noqa: N802,N803
    if _graph(graphExec, _EXECS) is None:
        return cudaError_t.cudaErrorInvalidValue, None
    return cudaError_t.cudaSuccess, INSTANTIATE_FLAGS


def cudaGetDeviceCount() -> tuple[Any, ...]:  # noqa: N802
    return cudaError_t.cudaSuccess, 1


def cudaGetDevice() -> tuple[Any, ...]:  # noqa: N802
    return cudaError_t.cudaSuccess, 0


def cudaGetErrorName(error: Any) -> tuple[Any, ...]:  # noqa: N802
    try:
        return cudaError_t.cudaSuccess, cudaError_t(int(error)).name.encode()
    except ValueError:
        return cudaError_t.cudaErrorInvalidValue, b"cudaErrorUnknown"


def cudaGetErrorString(error: Any) -> tuple[Any, ...]:  # noqa: N802
    try:
        return cudaError_t.cudaSuccess, _MESSAGES[cudaError_t(int(error))].encode()
    except (ValueError, KeyError):
        return cudaError_t.cudaErrorInvalidValue, b"unrecognized error code"


#: What ``cuda.bindings.runtime`` has in the stand-in.
RUNTIME_NAMES = ("cudaError_t", "cudaGraphNodeType", "cudaGraph_t", "cudaGraphExec_t", "cudaGraphNode_t",
                 "cudaGraphGetNodes", "cudaGraphGetRootNodes", "cudaGraphNodeGetType", "cudaGraphExecGetFlags",
                 "cudaGetDeviceCount", "cudaGetDevice", "cudaGetErrorName", "cudaGetErrorString")


class _StandIn(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """First on ``sys.meta_path``: finds ``cuda.bindings.runtime`` always, and the packages ``cuda`` and
    ``cuda.bindings`` only where no other finder does (an installed cuda-python keeps its packages)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in STAND_IN:
            return None
        if fullname != "cuda.bindings.runtime" and any(
                finder is not self and getattr(finder, "find_spec", None) is not None
                and finder.find_spec(fullname, path, target) is not None for finder in list(sys.meta_path)):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=fullname != "cuda.bindings.runtime")

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name, f"seamgate's emulated CUDA device: a stand-in for {spec.name} "
                                             "(seam/torch_cuda/cuda_bindings.py)")
        module.__dict__["__seamgate_stand_in__"] = True
        if spec.name == "cuda.bindings.runtime":
            module.__dict__.update({name: globals()[name] for name in RUNTIME_NAMES})
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__name__ != "cuda.bindings.runtime":
            module.__path__ = []  # type: ignore[attr-defined]  (a package: its submodules come from this finder)


_FINDER = _StandIn()
#: The real ``cuda.bindings.runtime`` imported before the emulation, and whether its package had it bound.
_SHADOWED: list[tuple[types.ModuleType, bool]] = []


def install() -> None:
    """Let ``import cuda.bindings.runtime`` find the stand-in, installed package or not."""
    real = sys.modules.get("cuda.bindings.runtime")
    if real is not None and not getattr(real, "__seamgate_stand_in__", False):
        package = sys.modules.get("cuda.bindings")
        bound = package is not None and getattr(package, "runtime", None) is real
        _SHADOWED.append((real, bound))
        del sys.modules["cuda.bindings.runtime"]
        if bound:
            delattr(package, "runtime")
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def remove() -> None:
    """Take the finder and every stand-in module out: the next import sees what is installed, as before."""
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in reversed(STAND_IN):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__seamgate_stand_in__", False):
            del sys.modules[name]
            parent, _, child = name.rpartition(".")
            if parent and getattr(sys.modules.get(parent), child, None) is module:  # an installed ``cuda`` package
                delattr(sys.modules[parent], child)
    while _SHADOWED:
        real, bound = _SHADOWED.pop()
        sys.modules["cuda.bindings.runtime"] = real
        package = sys.modules.get("cuda.bindings")
        if bound and package is not None:
            package.runtime = real  # type: ignore[attr-defined]
