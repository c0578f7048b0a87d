"""``scaled_dot_product_attention`` on the emulated device: the attention a GPU computes, where the CPU's choice of
kernel would refuse it.

torch picks an attention kernel in C++ by the tensors' real device, the CPU here, so the CPU's choice runs: its flash
kernel, or the math one. Two of its answers differ from a GPU's:

- the math kernel makes a causal mask with the query's options, which name the CPU for emulated device memory: a host
  mask added to device scores, refused as mixed devices ("Expected all tensors to be on the same device"), where a GPU
  computes. The CPU takes the math kernel for a causal attention with dropout (its flash kernel has none), for inputs
  that are not 4-D, and where its flash kernel is turned off. There the causal mask is made on the device and passed
  as the attention mask: the same attention (torch's math kernel builds the same mask, ``ones(L, S).tril()``).
- where only the memory-efficient or the cuDNN kernel is allowed (``sdpa_kernel``), which the CPU has not, it found
  "No viable backend", where a GPU runs that kernel: the math kernel runs instead, with the same values (those
  kernels' own limits on shapes and dtypes are not checked here).

Inside ``torch.compile``'s tracing the function is torch's own, which dynamo puts in the graph whole.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from seam.torch_cuda.kinds import is_device
from seam.torch_cuda.runtime import DEVICE

#: torch's own, taken before any emulation replaces the name.
TORCH_SDPA = F.scaled_dot_product_attention


def _math_only(query: torch.Tensor, dropout_p: float) -> bool:
    """Whether the CPU's choice is its math kernel (its flash kernel: 4-D inputs, no dropout, turned on)."""
    return dropout_p > 0 or query.dim() != 4 or not torch.backends.cuda.flash_sdp_enabled()


def scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: Any = None, **kwargs: Any) -> Any:
    if torch.compiler.is_compiling() or not (isinstance(query, torch.Tensor) and is_device(query)):
        # traced whole by dynamo, as torch's own function (the compiled graph decides its kernel from fake tensors)
        return TORCH_SDPA(query, key, value, attn_mask, dropout_p, is_causal, scale=scale, **kwargs)
    backends = torch.backends.cuda
    fallback = not (backends.flash_sdp_enabled() or backends.math_sdp_enabled()) and (
        backends.mem_efficient_sdp_enabled() or backends.cudnn_sdp_enabled())
    if is_causal and attn_mask is None and (fallback or _math_only(query, dropout_p)):
        attn_mask = torch.ones(query.shape[-2], key.shape[-2], dtype=torch.bool, device=DEVICE).tril()
        is_causal = False
    if not fallback:
        return TORCH_SDPA(query, key, value, attn_mask, dropout_p, is_causal, scale=scale, **kwargs)
    was = backends.math_sdp_enabled()
    backends.enable_math_sdp(True)
    try:
        return TORCH_SDPA(query, key, value, attn_mask, dropout_p, is_causal, scale=scale, **kwargs)
    finally:
        backends.enable_math_sdp(was)


def patches() -> list[tuple[Any, str, Any]]:
    """What ``emulate_cuda()`` puts in place (``install.py``)."""
    return [(F, "scaled_dot_product_attention", scaled_dot_product_attention)]
