"""``aux``: a shared expert on an AUXILIARY queue, forked and joined INSIDE the captured region.

Per layer the routed experts run on the main queue while the shared expert runs on a side queue:
``record_event``/``wait_event`` fork, the side work, then the join. The model tells the scope with
``note_fork`` / ``note_join``; if it ever forgets the join, the scope joins the side queue before the
segment closes (D10) and counts it in ``forks_auto_joined`` (real CUDA would otherwise fail at the
close with ``cudaErrorStreamCaptureUnjoined``).

Seed 003: during the UNCAPTURED warmups of ``capture_one`` (``is_capturing()`` true, no capturing
scope open) the overlap is turned off, so no side-queue work is left in flight across the capture
boundary; inside the scope, and on the eager lane, the overlap is on. Rollback: ``SEAM_AUX_GRAPH=0``.
"""

from __future__ import annotations

from typing import Sequence

import torch

from drivers.config import DriverConfig
from drivers.step_driver import Machinery, StepDriver
from drivers.tiny_model import EagerReference, KVCache, LayerWeights, decode_forward, dense_ffn, moe_ffn
from seam import Backend, CaptureMode, current_scope, is_capturing, note_fork, note_join


def overlap_allowed() -> bool:
    """Seed 003: no auxiliary overlap while a graph is prepared outside a capturing scope."""
    return current_scope() is not None or not is_capturing()


def shared_expert_ffn(layer: LayerWeights, h: torch.Tensor, top_k: int, shared: torch.Tensor) -> torch.Tensor:
    """Routed experts plus the already computed shared expert ``shared`` [B, T, H]."""
    return moe_ffn(layer, h, top_k) + shared


class AuxDriver(StepDriver):
    """T=1 decode with a shared expert overlapped on a side queue."""

    name = "aux"
    machinery = Machinery.SEAM

    def __init__(self, backend: Backend, cfg: DriverConfig = DriverConfig(), *, graph: bool | None = None) -> None:
        super().__init__(backend, cfg, graph=graph)
        self.side = backend.new_queue()
        self.cache = KVCache.allocate(cfg, backend.alloc)
        self.tokens = self.new_input((cfg.slots, 1))  # [B, 1]
        self.positions = self.new_input((cfg.slots, 1))  # [B, 1]
        self.start_step(CaptureMode.FULL, self.tokens, self.positions)

    def _forward(self) -> torch.Tensor:
        return decode_forward(self.weights, self.cache, self.tokens.device, self.positions.device, self._ffn)[:, -1]

    def _ffn(self, layer: LayerWeights, h: torch.Tensor) -> torch.Tensor:
        shared = self._shared_on_side_queue(layer, h) if overlap_allowed() else dense_ffn(layer, h)
        return shared_expert_ffn(layer, h, self.cfg.top_k, shared)

    def _shared_on_side_queue(self, layer: LayerWeights, h: torch.Tensor) -> torch.Tensor:
        q, side = self.queue, self.side
        self.backend.wait_event(side, self.backend.record_event(q))  # fork
        note_fork(side)
        with self.backend.use_queue(side):
            shared = dense_ffn(layer, h)  # [B, T, H]
        self.backend.wait_event(q, self.backend.record_event(side))  # join
        note_join(side)
        return shared

    def step(self, tokens: Sequence[int], position: int) -> torch.Tensor:
        """Logits [B, V] of one decode step."""
        return self.run_step(tokens, [position] * self.cfg.slots)


def reference_logits(cfg: DriverConfig, tokens: Sequence[Sequence[int]], device: str = "cpu") -> list[torch.Tensor]:
    """The eager reference: no queues, the shared expert computed inline."""
    ref = EagerReference(cfg, device)

    def ffn(layer: LayerWeights, h: torch.Tensor) -> torch.Tensor:
        return shared_expert_ffn(layer, h, cfg.top_k, dense_ffn(layer, h))

    return [ref([[t] for t in row], [[pos]] * len(row), ffn)[:, -1] for pos, row in enumerate(tokens)]
