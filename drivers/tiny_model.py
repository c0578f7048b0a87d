"""The tiny seeded decoder every driver runs: weights, a KV cache and the forward pieces.

Every function here is plain torch on whatever tensors it is given, so ONE definition serves both
the driver (device buffers, inside a capture) and its eager reference (plain tensors): a replay that
matches the reference bit-for-bit is then a statement about capture, not about two code paths.
Nothing here has a data-dependent shape, so all of it can be captured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch

from drivers.config import DriverConfig

Place = Callable[[torch.Tensor], torch.Tensor]
Alloc = Callable[[tuple[int, ...], torch.dtype], torch.Tensor]
FeedForward = Callable[["LayerWeights", torch.Tensor], torch.Tensor]


def _keep(t: torch.Tensor) -> torch.Tensor:
    return t


@dataclass(frozen=True)
class LayerWeights:
    """One decoder layer: single-head attention, a dense FFN, and a router with its experts."""

    wq: torch.Tensor  #: [H, H]
    wk: torch.Tensor  #: [H, H]
    wv: torch.Tensor  #: [H, H]
    wo: torch.Tensor  #: [H, H]
    up: torch.Tensor  #: [H, F]
    down: torch.Tensor  #: [F, H]
    router: torch.Tensor  #: [H, E]
    experts_up: torch.Tensor  #: [E, H, F]
    experts_down: torch.Tensor  #: [E, F, H]


@dataclass(frozen=True)
class TinyWeights:
    """Every weight of the tiny decoder, drawn from one seeded ``torch.Generator``."""

    embed: torch.Tensor  #: [V, H]
    layers: tuple[LayerWeights, ...]
    lm_head: torch.Tensor  #: [H, V]

    @classmethod
    def seeded(cls, cfg: DriverConfig, place: Place = _keep) -> "TinyWeights":
        """Draw the weights from ``cfg.seed``; ``place`` moves each one (``backend.to_device``)."""
        g = torch.Generator().manual_seed(cfg.seed)
        h, f, e = cfg.hidden, cfg.ffn, cfg.experts

        def draw(*shape: int) -> torch.Tensor:
            return place(torch.randn(*shape, generator=g) / math.sqrt(shape[-2] if len(shape) > 1 else 1))

        layers = tuple(
            LayerWeights(
                wq=draw(h, h), wk=draw(h, h), wv=draw(h, h), wo=draw(h, h),  # [H, H]
                up=draw(h, f), down=draw(f, h),  # [H, F], [F, H]
                router=draw(h, e),  # [H, E]
                experts_up=draw(e, h, f), experts_down=draw(e, f, h),  # [E, H, F], [E, F, H]
            )
            for _ in range(cfg.layers)
        )
        return cls(embed=draw(cfg.vocab, h), layers=layers, lm_head=draw(h, cfg.vocab))  # [V, H], [H, V]


@dataclass(frozen=True)
class KVCache:
    """A resident KV cache: one key and one value row per layer, slot and position."""

    k: torch.Tensor  #: [L, B, S, H]
    v: torch.Tensor  #: [L, B, S, H]

    @classmethod
    def allocate(cls, cfg: DriverConfig, alloc: Alloc | None = None) -> "KVCache":
        """A zeroed cache; ``alloc`` is ``backend.alloc`` for a device cache, plain zeros otherwise."""
        shape = (cfg.layers, cfg.slots, cfg.max_seq, cfg.hidden)
        make = alloc or (lambda s, d: torch.zeros(s, dtype=d))
        return cls(k=make(shape, torch.float32), v=make(shape, torch.float32))  # [L, B, S, H] each


def rms_norm(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def attention(layer: LayerWeights, cache: KVCache, index: int, h: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Write this step's keys/values at ``positions`` (on the device) and attend causally."""
    batch, steps, hidden = h.shape  # [B, T, H]
    q, k, v = h @ layer.wq, h @ layer.wk, h @ layer.wv  # [B, T, H] each
    where = positions.unsqueeze(-1).expand(batch, steps, hidden)  # [B, T, H]
    cache.k[index].scatter_(1, where, k)
    cache.v[index].scatter_(1, where, v)
    scores = (q @ cache.k[index].transpose(1, 2)) / math.sqrt(hidden)  # [B, T, S]
    keys = torch.arange(cache.k.shape[2], device=h.device)  # [S]
    visible = keys.view(1, 1, -1) <= positions.unsqueeze(-1)  # [B, T, S]
    scores = scores.masked_fill(visible.logical_not(), float("-inf"))
    return (torch.softmax(scores, dim=-1) @ cache.v[index]) @ layer.wo  # [B, T, H]


def dense_ffn(layer: LayerWeights, h: torch.Tensor) -> torch.Tensor:
    return torch.relu(h @ layer.up) @ layer.down  # [B, T, H]


def moe_ffn(layer: LayerWeights, h: torch.Tensor, top_k: int) -> torch.Tensor:
    """Top-k routing computed on the device with fixed shapes: every expert runs, gates weight them."""
    logits = h @ layer.router  # [B, T, E]
    top_vals, top_idx = logits.topk(top_k, dim=-1)  # [B, T, K] each
    gates = torch.zeros_like(logits).scatter(-1, top_idx, torch.softmax(top_vals, dim=-1))  # [B, T, E]
    hidden = torch.relu(h.unsqueeze(-2).unsqueeze(-2) @ layer.experts_up)  # [B, T, E, 1, F]
    out = (hidden @ layer.experts_down).squeeze(-2)  # [B, T, E, H]
    return (gates.unsqueeze(-1) * out).sum(-2)  # [B, T, H]


def decoder_layer(
    weights: TinyWeights, cache: KVCache, index: int, x: torch.Tensor, positions: torch.Tensor, ffn: FeedForward
) -> torch.Tensor:
    """One pre-norm layer: attention, then ``ffn``, each added to the residual stream ``x``."""
    layer = weights.layers[index]
    x = x + attention(layer, cache, index, rms_norm(x), positions)  # [B, T, H]
    return x + ffn(layer, rms_norm(x))  # [B, T, H]


def embed(weights: TinyWeights, tokens: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.embedding(tokens, weights.embed)  # [B, T, H]


def lm_head(weights: TinyWeights, x: torch.Tensor) -> torch.Tensor:
    return rms_norm(x) @ weights.lm_head  # [B, T, V]


def decode_forward(
    weights: TinyWeights, cache: KVCache, tokens: torch.Tensor, positions: torch.Tensor, ffn: FeedForward = dense_ffn
) -> torch.Tensor:
    """Logits for ``tokens`` [B, T] at ``positions`` [B, T], writing the cache on the way."""
    x = embed(weights, tokens)  # [B, T, H]
    for index in range(len(weights.layers)):
        x = decoder_layer(weights, cache, index, x, positions, ffn)
    return lm_head(weights, x)  # [B, T, V]


class EagerReference:
    """The eager reference every driver is compared with: plain tensors, no backend, no capture."""

    def __init__(self, cfg: DriverConfig, device: str = "cpu") -> None:
        self.cfg, self.device = cfg, device
        self.weights = TinyWeights.seeded(cfg, lambda t: t.to(device))
        self.cache = KVCache.allocate(cfg, lambda shape, dtype: torch.zeros(shape, dtype=dtype, device=device))

    def __call__(self, tokens: list[list[int]], positions: list[list[int]], ffn: FeedForward = dense_ffn) -> torch.Tensor:
        """Logits [B, T, V] of ``tokens`` at ``positions`` (both ``[B][T]`` nested lists)."""
        ids = torch.tensor(tokens, dtype=torch.int64, device=self.device)  # [B, T]
        pos = torch.tensor(positions, dtype=torch.int64, device=self.device)  # [B, T]
        return decode_forward(self.weights, self.cache, ids, pos, ffn)

    def greedy(self, first: list[int], steps: int, ffn: FeedForward = dense_ffn) -> list[list[int]]:
        """Greedy T=1 decode from ``first`` (one token per slot): the token row fed at each step."""
        rows = [list(first)]
        for pos in range(steps - 1):
            logits = self([[t] for t in rows[-1]], [[pos]] * len(first), ffn)[:, -1]  # [B, V]
            rows.append(logits.argmax(-1).tolist())
        return rows
