"""``torch.compile`` and ``torch._dynamo.reset()`` run on the device as on a GPU build.

torch's own test base class calls ``torch._dynamo.reset()`` around every test; with CUDA available it
imports ``torch._inductor.cudagraph_trees``, which a CPU-only build could not import while the
emulation says CUDA is built (it takes the caching allocator's state class from ``torch._C``).
"""

from __future__ import annotations

import torch


def test_dynamo_reset_and_a_compiled_function_on_device_tensors(torch_cuda: str) -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.sin(x) + 1

    torch._dynamo.reset()
    x = torch.ones(4, device="cuda")
    out = torch.compile(f, backend="eager")(x)
    assert out.device == torch.device("cuda", 0)
    assert torch.allclose(out.cpu(), torch.sin(torch.ones(4)) + 1)
    torch._dynamo.reset()
