"""``GraphRunner``: one decode step captured once with ``torch.cuda.graph`` and replayed every step.

Written the way engines write it (vLLM's ``CUDAGraphWrapper``, SGLang's runners): static input and
output buffers, warmup forwards on a side stream, one capture, then each step copies its inputs into
the static buffers IN PLACE and replays.
"""

from __future__ import annotations

import torch


class QuantLinear(torch.nn.Module):
    """A linear layer with an optional per-tensor activation scale (a1_scale) and a global fallback."""

    def __init__(self, hidden: int, a1_scale: torch.Tensor | None, a1_gscale: torch.Tensor) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.weight = torch.nn.Parameter(torch.randn(hidden, hidden) / hidden**0.5, requires_grad=False)
        self.a1_scale = a1_scale
        self.a1_gscale = a1_gscale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The scale is chosen by an `is None` test: a tensor's truth value would read the device on the
        # host, which CUDA refuses inside a capture (vLLM PR 46735 wrote `self.a1_scale or self.a1_gscale`).
        scale = self.a1_scale if self.a1_scale is not None else self.a1_gscale
        return torch.tanh((x * scale) @ self.weight)


class GraphRunner:
    """Capture ``model`` once for a fixed batch, then replay it for every step."""

    def __init__(self, model: torch.nn.Module, batch: int, hidden: int) -> None:
        self.model = model
        self.static_input = torch.zeros(batch, hidden, device="cuda")  # [B, H]
        self.graph = torch.cuda.CUDAGraph()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side), torch.no_grad():
            for _ in range(2):  # warm up: the thread's cuBLAS handle exists before the capture
                model(self.static_input)
        torch.cuda.current_stream().wait_stream(side)
        with torch.no_grad(), torch.cuda.graph(self.graph):
            self.static_output = model(self.static_input)  # [B, H]

    def step(self, x: torch.Tensor) -> torch.Tensor:
        self.static_input.copy_(x)
        self.graph.replay()
        return self.static_output.clone()
