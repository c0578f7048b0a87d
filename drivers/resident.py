"""``resident``: resident-cache T=1 decode in FULL mode, each slot at its own position.

The KV cache is allocated once and stays resident for the life of the captured graph: the graph
registers its address (a re-allocation would make a replay read the OLD cache, so the seam refuses
it with ``AddressChangedError``), and a slot is recycled IN PLACE (``reset_slot``) rather than by a
new buffer. Per-slot tokens and positions are host-authoritative here and go through pinned
``PersistentStepInput`` uploads before each replay. One FULL segment (W2: PIECEWISE over a decode
step faults on its first replay). Rollback switch: ``SEAM_RESIDENT_GRAPH=0``.
"""

from __future__ import annotations

from typing import Sequence

import torch

from drivers.config import DriverConfig
from drivers.step_driver import Machinery, StepDriver
from drivers.tiny_model import EagerReference, KVCache, decode_forward
from seam import Backend, CaptureMode


class ResidentDriver(StepDriver):
    """T=1 decode over a resident cache; slots advance independently."""

    name = "resident"
    machinery = Machinery.SEAM

    def __init__(self, backend: Backend, cfg: DriverConfig = DriverConfig(), *, graph: bool | None = None) -> None:
        super().__init__(backend, cfg, graph=graph)
        self.resident = KVCache.allocate(cfg, backend.alloc)  # [L, B, S, H] x2, never re-allocated
        self.tokens = self.new_input((cfg.slots, 1))  # [B, 1]: slot b's token
        self.positions = self.new_input((cfg.slots, 1))  # [B, 1]: slot b's own position
        self.start_step(CaptureMode.FULL, self.tokens, self.positions, self.resident.k, self.resident.v)

    def _forward(self) -> torch.Tensor:
        logits = decode_forward(self.weights, self.resident, self.tokens.device, self.positions.device)
        return logits.squeeze(1)  # [B, V]

    def step(self, tokens: Sequence[int], positions: Sequence[int]) -> torch.Tensor:
        """Logits [B, V]: slot ``b`` reads ``tokens[b]`` at ``positions[b]``."""
        return self.run_step(tokens, positions)

    def reset_slot(self, slot: int) -> None:
        """Recycle one slot's cache rows in place (the resident buffer keeps its address)."""
        with self.backend.use_queue(self.queue), torch.no_grad():
            self.resident.k[:, slot].zero_()
            self.resident.v[:, slot].zero_()


def reference_logits(cfg: DriverConfig, tokens: Sequence[Sequence[int]], positions: Sequence[Sequence[int]],
                     device: str = "cpu") -> list[torch.Tensor]:
    """The eager reference over ``[steps][B]`` token and position rows; logits [B, V] each."""
    ref = EagerReference(cfg, device)
    return [ref([[t] for t in trow], [[p] for p in prow]).squeeze(1) for trow, prow in zip(tokens, positions)]
