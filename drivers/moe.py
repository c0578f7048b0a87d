"""``moe``: mixture-of-experts T=1 decode whose token ids are re-read from the DEVICE every step.

Top-k routing runs on the device with fixed shapes (every expert computes, the gates weight them),
so the whole step captures in FULL. The ids come from the runner's device buffer through
``StepTokenIds.refresh`` (``refresh_from_device``), called once per step OUTSIDE the captured region,
before the replay: the graph reads the bound address, and this step's refresh is what it finds
there. Rollback switch: ``SEAM_MOE_GRAPH=0``.
"""

from __future__ import annotations

from functools import partial
from typing import Sequence

import torch

from drivers.config import DriverConfig
from drivers.step_driver import Machinery, StepDriver
from drivers.tiny_model import EagerReference, KVCache, decode_forward, moe_ffn
from seam import Backend, CaptureMode


class MoeDriver(StepDriver):
    """A MoE decode step over ``cfg.slots`` slots, ids from a device source."""

    name = "moe"
    machinery = Machinery.SEAM

    def __init__(self, backend: Backend, cfg: DriverConfig = DriverConfig(), *, graph: bool | None = None) -> None:
        super().__init__(backend, cfg, graph=graph)
        self.cache = KVCache.allocate(cfg, backend.alloc)
        self.token_ids = self.new_token_ids()  # [B, 1]
        self.positions = self.new_input((cfg.slots, 1))  # [B, 1]
        self.start_step(CaptureMode.FULL, self.token_ids.cell, self.positions)

    def _forward(self) -> torch.Tensor:
        ffn = partial(moe_ffn, top_k=self.cfg.top_k)
        return decode_forward(self.weights, self.cache, self.token_ids.ids, self.positions.device, ffn)[:, -1]  # [B, V]

    def step(self, device_ids: torch.Tensor, position: int) -> torch.Tensor:
        """Logits [B, V]; ``device_ids`` [B] is the runner's device buffer of this step's ids."""
        self.positions.refresh_from_host(self.queue, [position] * self.cfg.slots)
        self.token_ids.refresh(self.queue, device_ids)
        return self.step_fn.run()


def reference_logits(cfg: DriverConfig, tokens: Sequence[Sequence[int]], device: str = "cpu") -> list[torch.Tensor]:
    """The eager reference: one MoE decode step per row of ``tokens`` ([steps][B]), logits [B, V] each."""
    ref, ffn = EagerReference(cfg, device), partial(moe_ffn, top_k=cfg.top_k)
    return [ref([[t] for t in row], [[pos]] * len(row), ffn)[:, -1] for pos, row in enumerate(tokens)]
