"""The MoE feed-forward routes EACH token of a multi-token step ``[B, T>1, H]`` on its own.

Decode steps are T=1, where a token axis moved next to the batch axis goes unseen; a 1+k draft or a
prefill step has several tokens, and each must get its own top-k gates over every expert's output.
"""

from __future__ import annotations

import torch

from drivers.tiny_model import LayerWeights, moe_ffn

H, F, E, T = 4, 6, 3, 2  # T differs from E and from 1: a misplaced token axis cannot broadcast away


def test_each_token_of_a_two_token_step_gets_its_own_top_k_mixture_of_experts() -> None:
    g = torch.Generator().manual_seed(11)

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    lw = LayerWeights(wq=r(H, H), wk=r(H, H), wv=r(H, H), wo=r(H, H), up=r(H, F), down=r(F, H), router=r(H, E),
                      experts_up=r(E, H, F), experts_down=r(E, F, H))
    h = r(2, T, H)
    out = moe_ffn(lw, h, 2)
    assert out.shape == (2, T, H)
    for b in range(2):
        for t in range(T):
            scores = h[b, t] @ lw.router  # [E]
            chosen = torch.argsort(scores, descending=True)[:2]
            gates = torch.softmax(scores[chosen], dim=0)
            want = sum(w * (torch.clamp(h[b, t] @ lw.experts_up[e], min=0) @ lw.experts_down[e]) for w, e in zip(gates, chosen))
            assert torch.allclose(out[b, t], want, rtol=1e-10, atol=1e-12), (b, t)
