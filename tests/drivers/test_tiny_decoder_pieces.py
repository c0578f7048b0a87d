"""The tiny decoder's pieces each compute what their docstring says, checked against formulas written out here.

Every driver and its eager reference share ``tiny_model``, so a wrong scale, norm, gate or weight
draw is carried by both sides and no bit-exactness test sees it. These tests hold each piece to its
textbook definition on small hand-made inputs: scaled dot-product attention over the rows at or
before each position, RMS norm, a ReLU feed-forward, top-k expert gates that sum to one, seeded
weight draws scaled by their fan-in, a zeroed cache of the documented shape, and greedy decoding.
"""

from __future__ import annotations

import math

import pytest
import torch

from drivers.config import DriverConfig
from drivers.tiny_model import (EagerReference, KVCache, LayerWeights, TinyWeights, attention, decode_forward,
                                decoder_layer, dense_ffn, embed, lm_head, moe_ffn, rms_norm)

H, F, E = 4, 6, 3


def layer(seed: int = 1) -> LayerWeights:
    g = torch.Generator().manual_seed(seed)

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    return LayerWeights(wq=r(H, H), wk=r(H, H), wv=r(H, H), wo=r(H, H), up=r(H, F), down=r(F, H), router=r(H, E),
                        experts_up=r(E, H, F), experts_down=r(E, F, H))


def cache(slots: int = 2, rows: int = 5) -> KVCache:
    return KVCache(k=torch.zeros(1, slots, rows, H, dtype=torch.float64), v=torch.zeros(1, slots, rows, H, dtype=torch.float64))


def test_rms_norm_scales_each_vector_to_unit_root_mean_square_and_keeps_zero_at_zero() -> None:
    x = torch.tensor([[3.0, -4.0, 0.0, 12.0], [0.5, 0.5, 0.5, 0.5]], dtype=torch.float64)
    expected = x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-6)
    assert torch.allclose(rms_norm(x), expected, rtol=0, atol=1e-12)
    assert torch.allclose(rms_norm(x).pow(2).mean(-1), torch.ones(2, dtype=torch.float64), atol=1e-5)
    assert torch.equal(rms_norm(torch.zeros(1, 4)), torch.zeros(1, 4)), "zero stays zero (no division by zero)"
    tiny = torch.full((1, 4), 1e-4, dtype=torch.float64)  # where eps matters: 1e-8 against 1e-6
    assert torch.allclose(rms_norm(tiny), tiny / math.sqrt(1e-8 + 1e-6), rtol=1e-12)


def test_attention_is_scaled_dot_product_over_the_rows_at_or_before_each_position() -> None:
    lw, kv = layer(), cache()
    h = torch.randn(2, 2, H, generator=torch.Generator().manual_seed(7), dtype=torch.float64)  # [B, T, H]
    positions = torch.tensor([[0, 1], [2, 3]])
    out = attention(lw, kv, 0, h, positions)
    q, k, v = h @ lw.wq, h @ lw.wk, h @ lw.wv
    for b in range(2):
        assert torch.equal(kv.k[0, b, positions[b]], k[b]) and torch.equal(kv.v[0, b, positions[b]], v[b])
        for t in range(2):
            p = int(positions[b, t])
            keys, values = kv.k[0, b, : p + 1], kv.v[0, b, : p + 1]  # rows 0..p, the unwritten ones zero
            weights = torch.softmax(keys @ q[b, t] / math.sqrt(H), dim=-1)
            assert torch.allclose(out[b, t], (weights @ values) @ lw.wo, rtol=1e-10, atol=1e-12), (b, t)


def test_a_dense_ffn_is_relu_of_the_up_projection_then_the_down_projection() -> None:
    lw = layer()
    h = torch.randn(2, 1, H, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    assert torch.allclose(dense_ffn(lw, h), torch.clamp(h @ lw.up, min=0) @ lw.down, rtol=1e-12)


@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_moe_gates_are_the_softmax_of_the_top_k_router_scores_and_weight_each_experts_output(top_k: int) -> None:
    lw = layer()
    h = torch.randn(2, 1, H, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    out = moe_ffn(lw, h, top_k)
    for b in range(2):
        scores = h[b, 0] @ lw.router  # [E]
        chosen = torch.argsort(scores, descending=True)[:top_k]
        gates = torch.softmax(scores[chosen], dim=0)
        assert math.isclose(float(gates.sum()), 1.0, rel_tol=1e-12)
        want = sum(g * (torch.clamp(h[b, 0] @ lw.experts_up[e], min=0) @ lw.experts_down[e]) for g, e in zip(gates, chosen))
        assert torch.allclose(out[b, 0], want, rtol=1e-10, atol=1e-12), (top_k, b)


def test_a_decoder_layer_adds_attention_then_the_ffn_to_the_residual_stream_each_after_a_norm() -> None:
    weights = TinyWeights(embed=torch.zeros(1, H, dtype=torch.float64), layers=(layer(1), layer(2)),
                          lm_head=torch.zeros(H, 1, dtype=torch.float64))
    x = torch.randn(2, 1, H, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    positions = torch.tensor([[1], [0]])
    two = KVCache(k=torch.zeros(2, 2, 5, H, dtype=torch.float64), v=torch.zeros(2, 2, 5, H, dtype=torch.float64))
    got = decoder_layer(weights, two, 1, x, positions, dense_ffn)  # the SECOND layer: its weights, its cache rows
    second = weights.layers[1]
    mid = x + attention(second, cache(), 0, rms_norm(x), positions)
    assert torch.allclose(got, mid + dense_ffn(second, rms_norm(mid)), rtol=1e-12)
    assert torch.count_nonzero(two.k[0]) == 0 and torch.count_nonzero(two.k[1]) > 0


def test_embedding_reads_each_tokens_row_and_the_head_projects_the_normed_stream() -> None:
    table = torch.arange(5 * H, dtype=torch.float64).reshape(5, H)
    weights = TinyWeights(embed=table, layers=(), lm_head=torch.eye(H, dtype=torch.float64))
    tokens = torch.tensor([[4], [1]])
    assert torch.equal(embed(weights, tokens), table[tokens])
    x = torch.randn(2, 1, H, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    assert torch.allclose(lm_head(weights, x), rms_norm(x), rtol=1e-12)


def test_decode_forward_runs_every_layer_in_order_and_writes_each_layers_cache() -> None:
    cfg = DriverConfig(layers=3)
    weights = TinyWeights.seeded(cfg)
    kv = KVCache.allocate(cfg)
    tokens, positions = torch.tensor([[5], [6]]), torch.tensor([[0], [0]])
    got = decode_forward(weights, kv, tokens, positions)
    x = embed(weights, tokens)
    by_hand = KVCache.allocate(cfg)
    for index in range(cfg.layers):
        x = decoder_layer(weights, by_hand, index, x, positions, dense_ffn)
    assert torch.equal(got, lm_head(weights, x)) and got.shape == (2, 1, cfg.vocab)
    assert all(kv.k[i, :, 0].abs().sum() > 0 for i in range(cfg.layers)), "every layer writes its own cache rows"


def test_seeded_weights_are_the_documented_shapes_scaled_by_their_fan_in_and_fixed_by_the_seed() -> None:
    cfg = DriverConfig()
    w = TinyWeights.seeded(cfg)
    h, f, e = cfg.hidden, cfg.ffn, cfg.experts
    assert len(w.layers) == cfg.layers and w.embed.shape == (cfg.vocab, h) and w.lm_head.shape == (h, cfg.vocab)
    shapes = {"wq": (h, h), "wk": (h, h), "wv": (h, h), "wo": (h, h), "up": (h, f), "down": (f, h), "router": (h, e),
              "experts_up": (e, h, f), "experts_down": (e, f, h)}
    assert {k: tuple(getattr(w.layers[0], k).shape) for k in shapes} == shapes
    g = torch.Generator().manual_seed(cfg.seed)
    assert torch.equal(w.layers[0].wq, torch.randn(h, h, generator=g) / math.sqrt(h)), "the first draw, over sqrt(fan-in)"
    assert torch.equal(w.layers[0].wk, torch.randn(h, h, generator=g) / math.sqrt(h)), "the second draw"
    torch.randn(h, h, generator=g), torch.randn(h, h, generator=g)  # wv, wo
    assert torch.equal(w.layers[0].up, torch.randn(h, f, generator=g) / math.sqrt(h)), "[H, F] over sqrt(H), its fan-in"
    assert torch.equal(w.layers[0].down, torch.randn(f, h, generator=g) / math.sqrt(f)), "[F, H] over sqrt(F)"
    again, other = TinyWeights.seeded(cfg), TinyWeights.seeded(DriverConfig(seed=1))
    assert torch.equal(again.lm_head, w.lm_head) and not torch.equal(other.lm_head, w.lm_head)
    assert not torch.equal(w.layers[0].wq, w.layers[1].wq), "each layer draws its own weights"


def test_seeded_weights_are_each_placed_by_the_given_placement() -> None:
    placed: list[tuple[int, ...]] = []

    def place(t: torch.Tensor) -> torch.Tensor:
        placed.append(tuple(t.shape))
        return t * 0

    w = TinyWeights.seeded(DriverConfig(layers=2), place)
    assert len(placed) == 2 * 9 + 2 and torch.count_nonzero(w.embed) == 0 and torch.count_nonzero(w.layers[1].experts_down) == 0


def test_a_cache_is_zeroed_keys_and_values_of_layers_by_slots_by_rows_by_hidden() -> None:
    cfg = DriverConfig(layers=3, slots=2, max_seq=5, hidden=4)
    kv = KVCache.allocate(cfg)
    for t in (kv.k, kv.v):
        assert t.shape == (3, 2, 5, 4) and t.dtype == torch.float32 and torch.count_nonzero(t) == 0
    assert kv.k.data_ptr() != kv.v.data_ptr()
    made = []
    KVCache.allocate(cfg, lambda shape, dtype: made.append((shape, dtype)) or torch.ones(shape, dtype=dtype))
    assert made == [((3, 2, 5, 4), torch.float32)] * 2


def test_greedy_decoding_feeds_back_each_slots_argmax_at_the_next_position() -> None:
    cfg = DriverConfig()
    rows = EagerReference(cfg).greedy([3, 7], 4)
    assert len(rows) == 4 and rows[0] == [3, 7]
    by_hand, ref = [[3, 7]], EagerReference(cfg)
    for pos in range(3):
        logits = ref([[t] for t in by_hand[-1]], [[pos], [pos]])[:, -1]
        by_hand.append(logits.argmax(-1).tolist())
    assert rows == by_hand
