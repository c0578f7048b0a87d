"""Under ``torch.inference_mode()`` (as vLLM and SGLang run their models) an operation whose kernel is its
CompositeImplicitAutograd one keeps its result on the device, and a capture of it records what it makes.

Where autograd's dispatch keys are off, torch hands such an operation (``to``, ``contiguous``, ``reshape``,
``flatten``, ``linear``) to a dispatch mode whole; run whole on the CPU, ``x.half()``, ``x.t().contiguous()`` and a
copying ``reshape`` gave HOST tensors, and a capture of them recorded nothing ("The CUDA Graph is empty"), where a GPU
runs the composite kernel and the device operations it makes (``seam/torch_cuda/dispatch.py``, ``_OpInfo.implicit``).
"""

from __future__ import annotations

from typing import Callable

import pytest
import torch
import torch.nn.functional as F

CUDA = torch.device("cuda", 0)

_COMPOSITES: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "half": lambda x, w: x.half(),
    "float_of_half": lambda x, w: x.half().float(),
    "type_as": lambda x, w: x.type_as(w.double()),
    "contiguous": lambda x, w: x.t().contiguous(),
    "reshape_copies": lambda x, w: x.t().reshape(-1),
    "flatten_copies": lambda x, w: x.t().flatten(),
    "linear": lambda x, w: F.linear(x, w),
    "matmul": lambda x, w: torch.matmul(x, w.t()),
    "layer_norm": lambda x, w: F.layer_norm(x, (3,)),
    "softmax_to_float64": lambda x, w: torch.softmax(x, -1, dtype=torch.float64),
}


def _inputs() -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return torch.randn(4, 3), torch.randn(5, 3)


@pytest.mark.parametrize("name", sorted(_COMPOSITES))
def test_a_composite_under_inference_mode_gives_a_device_tensor_with_the_cpus_values(torch_cuda: str, name: str) -> None:
    op = _COMPOSITES[name]
    x, w = _inputs()
    want = op(x, w)
    with torch.inference_mode():
        got = op(x.cuda(), w.cuda())
    assert got.device == CUDA and got.is_cuda, f"{name} under inference mode gave a tensor on {got.device}"
    torch.testing.assert_close(got.cpu(), want, rtol=1e-3, atol=1e-3)


def test_a_capture_under_inference_mode_records_the_composites_work_and_replays_it(torch_cuda: str) -> None:
    x, w = _inputs()
    x, w = x.cuda(), w.cuda()
    with torch.inference_mode():
        for _ in range(2):  # warm up (the thread's cuBLAS handle) on a side stream, as torch's docs do
            F.linear(x.t().contiguous().t().half().float(), w)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = F.linear(x.t().contiguous().t().half().float(), w)
        assert out.device == CUDA
        x.fill_(1.0)
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(out.cpu(), F.linear(torch.ones(4, 3), w.cpu()), rtol=1e-3, atol=1e-3)
