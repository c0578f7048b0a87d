"""``dense``: T=1 decode whose token ids may come from the runner's asynchronous device mirror.

With no mirror, the step uploads the host token vector through a ``PersistentStepInput`` (pinned
staging) before the replay. With the mirror live, the host vector is stale by design, so the token
refresh is placed INSIDE the captured region as ``refresh_from_device`` from ``mirror.current()``:
capture bakes the mirror's address and the cursor read, and every replay re-reads the live row at
REPLAY time (seed 004). The unmigrated form could do neither and DECLINED its graph whenever the
mirror was live (#323, #1179). Rollback switch: ``SEAM_DENSE_GRAPH=0``.
"""

from __future__ import annotations

from typing import Sequence

import torch

from drivers.config import DriverConfig
from drivers.step_driver import Machinery, StepDriver
from drivers.tiny_model import EagerReference, KVCache, decode_forward
from drivers.token_mirror import TokenMirror
from seam import Backend, CaptureMode


class DenseDriver(StepDriver):
    """A dense T=1 decode step over ``cfg.slots`` slots."""

    name = "dense"
    machinery = Machinery.SEAM

    def __init__(self, backend: Backend, cfg: DriverConfig = DriverConfig(), *, mirror: TokenMirror | None = None,
                 graph: bool | None = None) -> None:
        super().__init__(backend, cfg, graph=graph)
        self.mirror = mirror
        self.cache = KVCache.allocate(cfg, backend.alloc)
        self.tokens = self.new_input((cfg.slots, 1))  # [B, 1]
        self.positions = self.new_input((cfg.slots, 1))  # [B, 1]
        self.start_step(CaptureMode.FULL, self.tokens, self.positions, self.cache.k, self.cache.v)

    def _forward(self) -> torch.Tensor:
        if self.mirror is not None:  # inside the captured region: re-read at replay time
            self.tokens.refresh_from_device(self.queue, self.mirror.current())
        logits = decode_forward(self.weights, self.cache, self.tokens.device, self.positions.device)  # [B, 1, V]
        return logits[:, -1]  # [B, V]

    def step(self, tokens: Sequence[int] | None, position: int) -> torch.Tensor:
        """Logits [B, V] for one decode step; ``tokens`` is ignored (may be stale) when the mirror is live."""
        self.positions.refresh_from_host(self.queue, [position] * self.cfg.slots)
        if self.mirror is None:
            if tokens is None:
                raise ValueError("dense step without a token mirror needs host tokens")
            self.tokens.refresh_from_host(self.queue, list(tokens))
        return self.step_fn.run()


def reference_logits(cfg: DriverConfig, tokens: Sequence[Sequence[int]], device: str = "cpu") -> list[torch.Tensor]:
    """The eager reference: one decode step per row of ``tokens`` ([steps][B]), logits [B, V] each."""
    ref = EagerReference(cfg, device)
    return [ref([[t] for t in row], [[pos]] * len(row))[:, -1] for pos, row in enumerate(tokens)]


def reference_greedy(cfg: DriverConfig, first: Sequence[int], steps: int, device: str = "cpu") -> list[list[int]]:
    """Greedy decode with the reference: the token row fed at each step ([steps][B])."""
    return EagerReference(cfg, device).greedy(list(first), steps)
