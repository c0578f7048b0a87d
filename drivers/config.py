"""``DriverConfig``: the sizes and seed of every tiny reference driver, as one frozen value."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DriverConfig:
    """Sizes of a tiny seeded decoder; small enough that a CPU decode step takes milliseconds."""

    #: Vocabulary size (token ids are ``0 .. vocab-1``).
    vocab: int = 48
    #: Hidden width of the residual stream.
    hidden: int = 16
    #: Width of a feed-forward (or expert) up-projection.
    ffn: int = 32
    #: Decoder layers.
    layers: int = 2
    #: KV-cache length per slot; every position a driver writes must be below it.
    max_seq: int = 24
    #: Decode slots (the batch ``B``).
    slots: int = 2
    #: Experts of a mixture-of-experts feed-forward (``moe`` and ``aux``).
    experts: int = 4
    #: Experts each token is routed to.
    top_k: int = 2
    #: Draft tokens of a (1+k) speculative draft step.
    draft_k: int = 3
    #: Seed of the ``torch.Generator`` every weight is drawn from.
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("vocab", "hidden", "ffn", "layers", "max_seq", "slots", "experts", "top_k", "draft_k"):
            if getattr(self, name) < 1:
                raise ValueError(f"DriverConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.top_k > self.experts:
            raise ValueError(f"DriverConfig.top_k ({self.top_k}) exceeds experts ({self.experts})")
