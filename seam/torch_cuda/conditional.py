"""CUDA graphs' conditional nodes, emulated: ``CUDAGraph.begin_capture_to_if_node`` / ``end_capture_to_conditional_node``.

On a GPU (CUDA >= 12.4, torch's ``CUDAGraph.cpp``) ``begin_capture_to_if_node(pred)`` adds an IF node to the
capture, whose handle a kernel sets from ``pred`` (a device scalar) when the graph runs, makes a stream of the pool
current and captures on it into the node's body graph until ``end_capture_to_conditional_node()``, which ends that
capture and makes the earlier stream current again. A replay runs the body only when ``pred`` holds a true value
THEN: what it held at capture does not matter. torch's ``torch.cond`` inside CUDA graph trees
(``torch._higher_order_ops.cudagraph_conditional_nodes``) captures each branch so, finding the graph through
``CUDAGraph.get_currently_capturing_graph()``.

Here the body's operations are recorded as any captured operation (on the body's stream, which joins the capture
ordered after the stream that began it) and, at the end, moved out of the capture's list into one ``IfNode`` there,
which a replay runs when ``pred``'s first element is nonzero. While the body is captured the graph's pool takes the
body stream's new blocks only (``routes.py``), as torch's child filter does. A random draw in the body is refused at
the end, in torch's words. Not modelled: a body whose operations also go on other streams than its own (each
operation recorded between begin and end is the body's).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from seam.emulator import GraphNode, storage_alias
from seam.torch_cuda import routes
from seam.torch_cuda.runtime import runtime

if TYPE_CHECKING:
    from seam.torch_cuda.capture import OpenCapture

#: Whether this torch's CUDA graphs have conditional nodes: torch 2.13 has them and the module that captures
#: ``torch.cond`` with them; the H100's torch 2.11 has neither (session 28: its ``CUDAGraph`` has no
#: ``begin_capture_to_if_node``). Without them the emulated ``CUDAGraph`` has none either.
TORCH_HAS_THEM = importlib.util.find_spec("torch._higher_order_ops.cudagraph_conditional_nodes") is not None

NOT_CAPTURING = "The current stream is not currently capturing."
NOT_BEGUN = "capture_begin() must be called before begin_capture_to_if_node()"
OWNS_A_GRAPH = "This CUDAGraph instance already owns a captured graph."
NO_CONDITIONAL = "Missing capture ID for conditional node."
RNG_IN_BODY = "RNG within data-dependent conditional nodes is not supported yet."


class IfNode(GraphNode):
    """A conditional node of a captured graph: its body runs at a replay when ``pred`` is true then."""

    __name__ = "cudaGraphNodeTypeConditional"

    def __init__(self, pred: torch.Tensor, body: list[Any]) -> None:
        super().__init__()
        self.args = (pred,)
        self.pred, self.body = pred, body

    def run(self) -> None:
        if self.pred.reshape(-1)[0].item():
            for op in self.body:
                op.run()


@dataclass
class OpenBody:
    """A conditional node's body being captured."""

    pred: torch.Tensor
    stream: Any
    #: The stream current at the begin, current again at the end.
    before: Any
    #: Where the body's operations start in the capture's list.
    start: int


def currently_capturing_graph() -> Any:
    """``CUDAGraph.get_currently_capturing_graph()``: the graph whose capture the current stream is part of."""
    rt = runtime()
    capture = rt.capture_of(rt.current_stream()._id)
    if capture is None:
        raise RuntimeError(NOT_CAPTURING)
    graph = capture.graph_ref()
    if graph is None:
        raise RuntimeError("get_currently_capturing_graph() can be used only between capture_begin() and "
                           "capture_end(). Did you use a stream without making it depend upon the original stream "
                           "used for capture?")
    return graph


def begin_if(capture: "OpenCapture | None", has_exec: bool, pred: torch.Tensor) -> None:
    """``begin_capture_to_if_node(pred)`` of a graph whose open capture is ``capture``."""
    if has_exec:
        raise RuntimeError(OWNS_A_GRAPH)
    rt = runtime()
    before = rt.current_stream()
    if capture is None or rt.capture_of(before._id) is not capture:
        raise RuntimeError(NOT_BEGUN)
    from seam.torch_cuda.streams import Stream  # imported here: streams imports the capture machinery

    body_stream = Stream()
    ledger = capture.ledger
    ledger.versions[body_stream._id] = 0  # it captures, ordered after all the stream that began it did
    ledger.seen[body_stream._id] = ledger.clock(before._id)
    routes.end(rt, capture.pool_handle)  # the graph's pool takes the body stream's blocks only
    rt.routes.append(routes.Route(capture.pool_handle, stream_id=body_stream._id))
    capture.bodies.append(OpenBody(storage_alias(pred), body_stream, before, len(capture.ops)))
    rt.set_current(body_stream)


def end_conditional(capture: "OpenCapture | None") -> None:
    """``end_capture_to_conditional_node()``: the body's operations become one ``IfNode`` of the capture."""
    if capture is None or not capture.bodies:
        raise RuntimeError(NO_CONDITIONAL)
    rt = runtime()
    body = capture.bodies.pop()
    ops = capture.ops
    recorded = list.__getitem__(ops, slice(body.start, None))
    list.__delitem__(ops, slice(body.start, None))
    ops.append(IfNode(body.pred, recorded))
    ledger = capture.ledger
    ledger.versions.pop(body.stream._id, None)
    ledger.seen.pop(body.stream._id, None)
    rt.set_current(body.before)
    routes.end(rt, capture.pool_handle)
    if capture.bodies:  # an enclosing body: its stream's blocks again
        rt.routes.append(routes.Route(capture.pool_handle, stream_id=capture.bodies[-1].stream._id))
    else:
        rt.routes.append(routes.Route(capture.pool_handle, capture=capture))
    if any(id(op) in capture.draws for op in recorded):
        raise RuntimeError(RNG_IN_BODY)

