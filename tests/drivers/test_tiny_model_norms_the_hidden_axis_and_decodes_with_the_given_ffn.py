"""RMS norm normalizes each token's HIDDEN vector of a ``[B, T, H]`` stream, and greedy decoding uses the ffn it is given.

A 2-D input cannot tell the last axis from axis 1; the decoder's stream is 3-D, where normalizing
over the tokens instead of the hidden units changes every value. ``EagerReference.greedy`` and its
call take an ``ffn`` (``dense_ffn`` by default); a MoE reference decodes through the experts.
"""

from __future__ import annotations

import functools

import torch

from drivers.config import DriverConfig
from drivers.tiny_model import EagerReference, moe_ffn, rms_norm


def test_rms_norm_of_a_stream_normalizes_each_tokens_hidden_vector() -> None:
    x = torch.tensor([[[3.0, -4.0, 0.0], [1.0, 1.0, 1.0]], [[0.0, 2.0, 0.0], [6.0, 0.0, 8.0]]], dtype=torch.float64)
    got = rms_norm(x)  # [B=2, T=2, H=3]
    for b in range(2):
        for t in range(2):
            v = x[b, t]
            assert torch.allclose(got[b, t], v / torch.sqrt(v.pow(2).mean() + 1e-6), rtol=0, atol=1e-12)


def test_greedy_decoding_runs_the_feed_forward_it_is_given() -> None:
    cfg = DriverConfig()
    moe = functools.partial(moe_ffn, top_k=cfg.top_k)
    rows = EagerReference(cfg).greedy([3, 7], 4, moe)
    by_hand, ref = [[3, 7]], EagerReference(cfg)
    for pos in range(3):
        by_hand.append(ref([[t] for t in by_hand[-1]], [[pos], [pos]], moe)[:, -1].argmax(-1).tolist())
    assert rows == by_hand
    assert rows != EagerReference(cfg).greedy([3, 7], 4), "the experts decode other tokens than the dense ffn"
