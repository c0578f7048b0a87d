"""``torch.autocast("cuda")`` on the emulated device: CUDA's casting policy, not the CPU's.

The emulated device's tensors are CPU tensors, so torch's CUDA autocast (the ``AutocastCUDA`` dispatch key)
never sees them, and torch's CPU autocast has other lists (it keeps ``layer_norm`` and ``softmax`` in
bfloat16 where CUDA computes them in float32). Inside ``emulate_cuda()``:

- entering ``torch.autocast("cuda", ...)`` (``torch.cuda.amp.autocast`` too) turns CPU autocast on with the
  same dtype for the region (``enter``/``exit``, put over ``torch.amp.autocast_mode.autocast``'s), so the
  ``AutocastCPU`` key runs;
- under that key, kernels registered for the region's lifetime apply CUDA's policy (the op lists below,
  the H200's dtypes: ``tests/fidelity/cuda_corpus.py``, class ``autocast``) to the DEVICE tensors of an
  op, each op of a list cast once before it runs, as CUDA's autocast does; every other op the CPU's lists
  name falls through (composites decompose, and their parts meet the policy);
- the lists say which policy an op takes; whether it takes one at all is the installed torch's word: only
  an overload that has an ``AutocastCUDA`` kernel in this build (``cuda_autocasts``) is registered, so the
  policy follows torch's version (``rms_norm`` gained its float32 kernel in torch 2.12: torch 2.11 on the
  H100 keeps it in the autocast dtype, and so does the emulation on such a torch);
- host (pageable, pinned) tensors are never cast, as CUDA's autocast casts only CUDA tensors;
- ``binary_cross_entropy`` of device tensors is refused in torch's words (``BANNED``: CUDA's autocast bans it,
  whatever the dtype; its ``out=`` overload and its backward are not banned: the H200, torch 2.11).

Not modelled: the cast cache of weights (it saves casts, not values), and ``torch.autocast("cpu")`` regions inside the emulation (their ops are not cast: the CPU's own
kernels are replaced while the emulation has a registration).
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

from seam.op_args import map_leaves, tensors
from seam.torch_cuda.kinds import is_device

#: Ops CUDA's autocast runs in the autocast dtype (``lower_precision_fp``).
LOWER = ("_convolution", "cudnn_convolution", "cudnn_convolution_transpose", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
         "conv_transpose3d", "convolution", "prelu", "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv",
         "linalg_vecdot", "linear", "addbmm", "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot",
         "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
         "_scaled_dot_product_flash_attention", "scaled_dot_product_attention")
#: Ops CUDA's autocast runs in float32 (``fp32``, ``fp32_set_opt_dtype``, ``fp32_append_dtype``).
FP32 = ("acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
        "sinh", "tan", "pow", "softplus", "layer_norm", "native_layer_norm", "rms_norm", "group_norm", "frobenius_norm",
        "nuclear_norm", "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
        "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
        "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
        "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm", "logsumexp",
        "upsample_nearest1d", "_upsample_nearest_exact1d", "upsample_nearest2d", "_upsample_nearest_exact2d",
        "upsample_nearest3d", "_upsample_nearest_exact3d", "upsample_linear1d", "upsample_bilinear2d",
        "_upsample_bilinear2d_aa", "upsample_trilinear3d", "upsample_bicubic2d", "_upsample_bicubic2d_aa",
        "prod", "softmax", "log_softmax", "cumprod", "cumsum", "linalg_vector_norm", "linalg_matrix_norm", "sum",
        "norm")
#: Ops CUDA's autocast runs in the widest floating type of their tensors (``promote``).
PROMOTE = ("addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot", "grid_sampler", "index_put",
           "tensordot", "scatter_add")
#: Ops a CUDA build's autocast casts with kernels a CPU-only build does not register, which the emulated device never
#: reaches: its RNNs run the CPU's kernels, never cuDNN's (``_cudnn_rnn``'s autocast, H100 torch 2.11, session 27).
NOT_REACHED = frozenset({"_cudnn_rnn"})
#: Ops CUDA's autocast refuses (its ``banned`` kernels; only the default overload is registered), with torch's words.
BANNED = {"binary_cross_entropy": (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")}
_KEY = torch._C.DispatchKey.AutocastCPU
_ELIGIBLE = (torch.float32, torch.float16, torch.bfloat16)


def _cast(value: Any, dtype: torch.dtype) -> Any:
    def one(t: Any) -> Any:
        if isinstance(t, torch.Tensor) and t.dtype in _ELIGIBLE and t.dtype != dtype and is_device(t):
            return t.to(dtype)
        return t
    return map_leaves(one, value)


def _widest(args: Any, kwargs: Any) -> torch.dtype | None:
    found = [t.dtype for t in tensors((args, kwargs)) if t.is_floating_point() and is_device(t)]
    return max(found, key=lambda d: torch.finfo(d).bits, default=None)


def _kernel(op: Any, policy: str) -> Any:
    def run(*args: Any, **kwargs: Any) -> Any:
        if torch.is_autocast_enabled("cuda"):
            if policy == "lower":
                args, kwargs = _cast((args, kwargs), torch.get_autocast_dtype("cuda"))
            elif policy == "fp32":
                args, kwargs = _cast((args, kwargs), torch.float32)
            else:
                widest = _widest(args, kwargs)
                if widest is not None:
                    args, kwargs = _cast((args, kwargs), widest)
        with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(_KEY)):
            return op(*args, **kwargs)
    return run


def cuda_autocasts(qualified: str) -> bool:
    """Whether the installed torch has a CUDA autocast kernel for ``qualified`` (``"rms_norm"``,
    ``"pow.Tensor_Scalar"``): a CPU-only build registers them too, though no tensor of its reaches them."""
    try:
        return torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{qualified}", "AutocastCUDA")
    except RuntimeError:  # an overload only Python knows of (``einsum.sublist``): not the dispatcher's
        return False


def _banned(op: Any, words: str) -> Any:
    def run(*args: Any, **kwargs: Any) -> Any:
        if torch.is_autocast_enabled("cuda") and any(
                is_device(t) for t in tensors((args, kwargs))):
            raise RuntimeError(words)
        with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(_KEY)):
            return op(*args, **kwargs)
    return run


class _Registration:
    """The kernels of the policy under ``AutocastCPU``, while the emulation lasts (``close`` puts torch's back)."""

    def __init__(self) -> None:
        # torch warns of each kernel replaced (its own CPU casts): expected here, and put back by ``close``
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self._register()

    def _register(self) -> None:
        self.lib = torch.library.Library("aten", "IMPL")
        policy = {**dict.fromkeys(LOWER, "lower"), **dict.fromkeys(FP32, "fp32"), **dict.fromkeys(PROMOTE, "promote")}
        done: set[str] = set()
        for name, words in BANNED.items():
            self.lib.impl(name, _banned(getattr(torch.ops.aten, name).default, words), "AutocastCPU")
            done.add(f"aten::{name}")
        for name, kind in policy.items():
            packet = getattr(torch.ops.aten, name, None)
            if packet is None:
                continue
            for overload in packet.overloads():
                qualified = name if overload == "default" else f"{name}.{overload}"
                if not cuda_autocasts(qualified):
                    continue
                self.lib.impl(qualified, _kernel(getattr(packet, overload), kind), "AutocastCPU")
                done.add(f"aten::{qualified}")
        # the CPU's own casts of ops CUDA does not list: torch's fallthrough, as CUDA's autocast has for them
        for qualified in torch._C._dispatch_get_registrations_for_dispatch_key("AutocastCPU"):
            if qualified.startswith("aten::") and qualified not in done:
                self.lib.impl(qualified[len("aten::"):], torch.library.fallthrough_kernel, "AutocastCPU")

    def close(self) -> None:
        self.lib._destroy()


_registration: list[_Registration] = []


def close() -> None:
    """Put torch's own ``AutocastCPU`` kernels back (the emulation's end)."""
    while _registration:
        _registration.pop().close()


_ENTER = torch.amp.autocast_mode.autocast.__enter__
_EXIT = torch.amp.autocast_mode.autocast.__exit__


def enter(self: Any) -> Any:
    """``autocast.__enter__``: a ``cuda`` region turns CPU autocast on with its dtype (and the policy's kernels)."""
    result = _ENTER(self)
    if self.device == "cuda":
        if not _registration:
            _registration.append(_Registration())
        self._seam_cpu_state = (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
        torch.set_autocast_enabled("cpu", torch.is_autocast_enabled("cuda"))
        torch.set_autocast_dtype("cpu", torch.get_autocast_dtype("cuda"))
    return result


def exit(self: Any, *exc: Any) -> Any:
    """``autocast.__exit__``: the CPU autocast state the region found comes back."""
    state = self.__dict__.pop("_seam_cpu_state", None)
    if state is not None:
        torch.set_autocast_enabled("cpu", state[0])
        torch.set_autocast_dtype("cpu", state[1])
    return _EXIT(self, *exc)


PATCHES = [(torch.amp.autocast_mode.autocast, "__enter__", enter), (torch.amp.autocast_mode.autocast, "__exit__", exit)]
