"""The toy engine's decode step, migrated onto the capture seam: captured once, replayed every step.

The engine's token ids live in a ``PersistentStepInput`` (the captured graph baked its address; each
step refreshes it in place from the host). The first step on a backend that can capture runs
``capture_one`` (one eager warmup, ``synchronize``, then a capture into a ``BreakableGraph``); every
step, the first included, then replays that graph. Where capture is off (``SEAM_CUDAGRAPH=0``) or
impossible (an eager backend), every step runs the forward eagerly.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from seam import Backend, BreakableGraph, CaptureMode, PersistentStepInput, capture_one, cudagraph_enabled

VOCAB, HIDDEN, SLOTS = 16, 8, 2


class ToyModel:
    """An embedding, a tanh and a projection, with seeded weights on the backend's device."""

    def __init__(self, to_device: Callable[[torch.Tensor], torch.Tensor], seed: int = 0) -> None:
        gen = torch.Generator().manual_seed(seed)
        self.embed = to_device(torch.randn(VOCAB, HIDDEN, generator=gen))  # [V, H]
        self.proj = to_device(torch.randn(HIDDEN, VOCAB, generator=gen))  # [H, V]

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits [B, V] for token ids [B]."""
        return torch.tanh(self.embed[tokens]) @ self.proj


def reference_logits(steps: Sequence[Sequence[int]]) -> list[torch.Tensor]:
    """The eager reference on the CPU: logits [B, V] for each step's token ids.

    It spells the forward out again rather than calling ``ToyModel.forward``: a reference that ran
    the code under test would agree with any change to it.
    """
    model = ToyModel(lambda t: t)
    return [torch.tanh(model.embed[torch.tensor(list(tokens))]) @ model.proj for tokens in steps]


class DecodeStep:
    """One T=1 decode step over ``slots`` sequences, on the capture lane where the backend can capture."""

    def __init__(self, backend: Backend, slots: int = SLOTS) -> None:
        self.backend = backend
        self.queue = backend.default_queue()
        self.model = ToyModel(backend.to_device)
        self.tokens = PersistentStepInput().bind(backend, backend.alloc((slots,), torch.int64))  # [B]
        self.lane = "capture" if backend.can_capture and cudagraph_enabled() else "eager"
        self.graph: BreakableGraph | None = None
        self._logits: torch.Tensor | None = None

    def step(self, tokens: Sequence[int]) -> torch.Tensor:
        """Logits [B, V] for this step's token ids (one per slot)."""
        self.tokens.refresh_from_host(self.queue, list(tokens))
        if self.lane == "eager":
            return self._forward().clone()
        if self.graph is None:
            self._capture()
        self.graph.replay(self.queue)
        return self._logits.clone()

    def _capture(self) -> None:
        captured = capture_one(self._forward, backend=self.backend, graph=self._new_graph, warmups=1,
                               queue=self.queue)
        self.graph, self._logits = captured.graph, captured.output

    def _forward(self) -> torch.Tensor:
        return self.backend.launch(self.model.forward, self.tokens.device)

    def _new_graph(self) -> BreakableGraph:
        graph = BreakableGraph(self.backend, CaptureMode.FULL)
        graph.register_input(self.tokens)
        return graph
