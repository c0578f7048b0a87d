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
from drivers.graphed_step import GraphedStep, capture_admitted, persistent_input
from drivers.tiny_model import EagerReference, KVCache, TinyWeights, decode_forward
from seam import Backend, CaptureMode


class ResidentDriver:
    """T=1 decode over a resident cache; slots advance independently."""

    name = "resident"

    def __init__(self, backend: Backend, cfg: DriverConfig = DriverConfig(), *, graph: bool | None = None) -> None:
        self.backend, self.cfg = backend, cfg
        self.queue = backend.default_queue()
        self.weights = TinyWeights.seeded(cfg, backend.to_device)
        self.resident = KVCache.allocate(cfg, backend.alloc)  # [L, B, S, H] x2, never re-allocated
        self.slot_tokens = persistent_input(backend, (cfg.slots, 1))  # [B, 1]
        self.slot_positions = persistent_input(backend, (cfg.slots, 1))  # [B, 1]
        admitted = capture_admitted(backend, self.name) if graph is None else graph
        self.step_fn = GraphedStep(
            backend, self._forward, admitted=admitted, mode=CaptureMode.FULL,
            inputs=(self.slot_tokens, self.slot_positions, self.resident.k, self.resident.v),
        )

    def _forward(self) -> torch.Tensor:
        logits = decode_forward(self.weights, self.resident, self.slot_tokens.device, self.slot_positions.device)
        return logits.squeeze(1)  # [B, V]

    def step(self, tokens: Sequence[int], positions: Sequence[int]) -> torch.Tensor:
        """Logits [B, V]: slot ``b`` reads ``tokens[b]`` at ``positions[b]``."""
        self.slot_tokens.refresh_from_host(self.queue, list(tokens))
        self.slot_positions.refresh_from_host(self.queue, list(positions))
        return self.step_fn.run()

    def reset_slot(self, slot: int) -> None:
        """Recycle one slot's cache rows in place (the resident buffer keeps its address)."""
        with self.backend.use_queue(self.queue), torch.no_grad():
            self.resident.k[:, slot].zero_()
            self.resident.v[:, slot].zero_()

    @property
    def lane(self) -> str:
        return self.step_fn.lane


def reference_logits(cfg: DriverConfig, tokens: Sequence[Sequence[int]], positions: Sequence[Sequence[int]],
                     device: str = "cpu") -> list[torch.Tensor]:
    """The eager reference over ``[steps][B]`` token and position rows; logits [B, V] each."""
    ref = EagerReference(cfg, device)
    return [ref([[t] for t in trow], [[p] for p in prow]).squeeze(1) for trow, prow in zip(tokens, positions)]
