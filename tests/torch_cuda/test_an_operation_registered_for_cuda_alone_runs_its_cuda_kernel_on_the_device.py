"""An operation a library registers for CUDA alone (``torch.library``, in Python) runs that kernel on the device.

Engines register their operations for the "CUDA" dispatch key (vLLM's ``direct_register_custom_op``,
``torch.library.custom_op(..., device_types="cuda")``). A device tensor of the emulation is CPU memory, so torch's
dispatcher looked for a CPU kernel and raised "Could not run ... with arguments from the 'CPU' backend" where a GPU
runs the CUDA one. On the device it runs the CUDA kernel now, its own operations on the device: recorded in a capture
and replayed as any other; a call on host tensors is refused as on a GPU (``seam/torch_cuda/dispatch.py``,
``_made_here``).
"""

from __future__ import annotations

import itertools
from typing import Any, Callable

import pytest
import torch
from torch.library import Library, custom_op

_NAMES = itertools.count()
#: Libraries made by these tests: torch drops an operation's registration when its library object dies.
_KEPT: list[Any] = []


def _library_op(kernel: Callable[..., Any]) -> Any:
    """A fresh operation ``seamgate_test_N::op(Tensor x) -> Tensor`` whose only kernel is ``kernel``, for CUDA."""
    namespace = f"seamgate_test_{next(_NAMES)}"
    lib = Library(namespace, "DEF")
    lib.define("op(Tensor x) -> Tensor")
    lib.impl("op", kernel, "CUDA")
    _KEPT.append(lib)
    return getattr(torch.ops, namespace).op


def _custom_op() -> Any:
    """A fresh ``torch.library.custom_op`` for CUDA alone: ``x * f + 1``."""
    @custom_op(f"seamgate_test_custom_{next(_NAMES)}::scaled", mutates_args=(), device_types="cuda")
    def scaled(x: torch.Tensor, f: float) -> torch.Tensor:
        return x * f + 1

    _KEPT.append(scaled)
    return scaled


def test_a_library_kernel_for_cuda_runs_on_device_tensors(torch_cuda: str) -> None:
    op = _library_op(lambda x: x * 2)
    out = op(torch.arange(3.0, device="cuda"))
    assert out.device == torch.device("cuda", 0) and out.cpu().tolist() == [0.0, 2.0, 4.0]


def test_a_custom_op_for_cuda_alone_runs_on_device_tensors(torch_cuda: str) -> None:
    scaled = _custom_op()
    out = scaled(torch.ones(2, device="cuda"), 3.0)
    assert out.is_cuda and out.cpu().tolist() == [4.0, 4.0]


def test_a_captured_kernel_for_cuda_recomputes_at_each_replay(torch_cuda: str) -> None:
    op, scaled = _library_op(lambda x: x * 2), _custom_op()
    x = torch.ones(4, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        op(x) + scaled(x, 3.0)  # warmed up before the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = op(x) + scaled(x, 3.0)
    for value in (5.0, -1.0):
        x.fill_(value)
        graph.replay()
        torch.cuda.synchronize()
        assert out.cpu().tolist() == [value * 2 + value * 3 + 1] * 4


def test_a_kernel_for_cuda_alone_refuses_host_tensors_as_on_a_gpu(torch_cuda: str) -> None:
    op = _library_op(lambda x: x * 2)
    with pytest.raises(NotImplementedError, match="with arguments from the 'CPU' backend"):
        op(torch.ones(2))
