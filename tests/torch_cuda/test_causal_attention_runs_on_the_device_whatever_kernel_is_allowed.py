"""A causal ``scaled_dot_product_attention`` on the device gives the attention, whatever kernel is allowed and with
dropout, as on a GPU.

The CPU's math kernel made its causal mask with the query's options (the CPU, for emulated memory) and added it to
device scores: "Expected all tensors to be on the same device" where a GPU computes, for a causal attention with
dropout or under ``sdpa_kernel(SDPBackend.MATH)``; where only the memory-efficient or cuDNN kernel was allowed the
CPU found "No viable backend". ``seam/torch_cuda/attention.py``.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

CUDA = torch.device("cuda", 0)


def _qkv(dtype: torch.dtype = torch.float16) -> tuple[torch.Tensor, ...]:
    torch.manual_seed(0)
    return tuple(torch.randn(2, 4, 8, 16).to(dtype) for _ in range(3))


@pytest.mark.parametrize("kernel", ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH"])
def test_a_causal_attention_under_each_kernel_gives_the_attention(torch_cuda: str, kernel: str) -> None:
    q, k, v = _qkv()
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
    with sdpa_kernel([getattr(SDPBackend, kernel)]):
        got = F.scaled_dot_product_attention(q.cuda(), k.cuda(), v.cuda(), is_causal=True)
    assert got.device == CUDA and got.dtype == torch.float16
    torch.testing.assert_close(got.cpu().float(), want, rtol=2e-3, atol=2e-3)


def test_a_causal_attention_with_dropout_runs_and_keeps_the_masked_part_out(torch_cuda: str) -> None:
    q, k, v = _qkv(torch.float32)
    v = torch.eye(8).expand(2, 4, 8, 8).contiguous()  # each output row is that row's attention weights
    got = F.scaled_dot_product_attention(q[..., :8].cuda(), k[..., :8].cuda(), v.cuda(), dropout_p=0.5,
                                         is_causal=True)
    assert got.device == CUDA
    assert torch.count_nonzero(torch.triu(got.cpu(), diagonal=1)) == 0, "a future position was attended"
    assert torch.count_nonzero(got.cpu()) > 0


def test_a_3d_causal_attention_gives_the_attention(torch_cuda: str) -> None:
    q, k, v = (t[0] for t in _qkv(torch.float32))
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    got = F.scaled_dot_product_attention(q.cuda(), k.cuda(), v.cuda(), is_causal=True)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4)
