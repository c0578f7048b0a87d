"""``piecewise``: a data-dependent routing break between two captured segments (PIECEWISE).

After layer 0 a "rare path" is applied only to the rows whose route score is positive: the row set
comes from ``torch.nonzero``, a data-dependent shape that a capture refuses (``CaptureSyncError``;
real CUDA invalidates the capture). So it is a ``break_point``: in PIECEWISE the scope closes the
first segment, runs the routing EAGERLY (at capture and at every replay), and opens the second.
The routing's output is bridged into the second segment through a persistent device buffer
(``bridge``), whose address the second segment baked. Rollback switch: ``SEAM_PIECEWISE_GRAPH=0``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import torch

from drivers.config import DriverConfig
from drivers.step_driver import Machinery, StepDriver
from drivers.tiny_model import EagerReference, KVCache, Place, TinyWeights, decoder_layer, dense_ffn, embed, lm_head
from seam import Backend, CaptureMode, break_point


@dataclass(frozen=True)
class RarePath:
    """The route direction that picks rows, and the transform applied to the picked rows."""

    route: torch.Tensor  #: [H]
    transform: torch.Tensor  #: [H, H]

    @classmethod
    def seeded(cls, cfg: DriverConfig, place: Place | None = None) -> "RarePath":
        g = torch.Generator().manual_seed(cfg.seed + 1)
        place = place or (lambda t: t)
        route = torch.randn(cfg.hidden, generator=g)  # [H]
        transform = torch.randn(cfg.hidden, cfg.hidden, generator=g) / math.sqrt(cfg.hidden)  # [H, H]
        return cls(route=place(route), transform=place(transform))

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` [B, T, H] with the rare transform applied to the rows whose score is positive."""
        flat = x.reshape(-1, x.shape[-1])  # [N, H]
        rows = torch.nonzero(flat @ self.route > 0).squeeze(1)  # [R], data-dependent
        routed = flat.clone()  # [N, H]
        routed[rows] = torch.tanh(flat[rows] @ self.transform)  # [R, H]
        return routed.view_as(x)  # [B, T, H]


def two_segment_forward(weights: TinyWeights, cache: KVCache, tokens: torch.Tensor, positions: torch.Tensor,
                        bridge_in: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """Layer 0, then ``bridge_in(x)`` (the routing; returns the bridged stream), then the rest."""
    x = decoder_layer(weights, cache, 0, embed(weights, tokens), positions, dense_ffn)  # [B, T, H]
    x = bridge_in(x)
    for index in range(1, len(weights.layers)):
        x = decoder_layer(weights, cache, index, x, positions, dense_ffn)
    return lm_head(weights, x)[:, -1]  # [B, V]


class PiecewiseDriver(StepDriver):
    """T=1 decode captured as two segments around an eager routing break."""

    name = "piecewise"
    machinery = Machinery.SEAM

    def __init__(self, backend: Backend, cfg: DriverConfig = DriverConfig(), *, graph: bool | None = None) -> None:
        if cfg.layers < 2:
            raise ValueError("the piecewise driver needs >= 2 layers: one segment on each side of the break")
        super().__init__(backend, cfg, graph=graph)
        self.rare = RarePath.seeded(cfg, backend.to_device)
        self.cache = KVCache.allocate(cfg, backend.alloc)
        self.bridge = backend.alloc((cfg.slots, 1, cfg.hidden))  # [B, 1, H]
        self.tokens = self.new_input((cfg.slots, 1))  # [B, 1]
        self.positions = self.new_input((cfg.slots, 1))  # [B, 1]
        self.start_step(CaptureMode.PIECEWISE, self.tokens, self.positions, self.bridge)

    def _forward(self) -> torch.Tensor:
        return two_segment_forward(self.weights, self.cache, self.tokens.device, self.positions.device, self._bridge_in)

    def _bridge_in(self, x: torch.Tensor) -> torch.Tensor:
        break_point(lambda: self.backend.copy(self.bridge, self.rare.apply(x), self.queue))
        return self.bridge

    def step(self, tokens: Sequence[int], position: int) -> torch.Tensor:
        """Logits [B, V] of one decode step."""
        return self.run_step(tokens, [position] * self.cfg.slots)


def reference_logits(cfg: DriverConfig, tokens: Sequence[Sequence[int]], device: str = "cpu") -> list[torch.Tensor]:
    """The eager reference: the routing inline, no bridge buffer."""
    ref, rare = EagerReference(cfg, device), RarePath.seeded(cfg, lambda t: t.to(device))
    out = []
    for pos, row in enumerate(tokens):
        ids = torch.tensor([[t] for t in row], dtype=torch.int64, device=device)  # [B, 1]
        out.append(two_segment_forward(ref.weights, ref.cache, ids, torch.full_like(ids, pos), rare.apply))
    return out
