"""torch's own operations whose only kernel is CUDA's, written in Python for the emulated device.

A CPU-only torch has no kernel for them at all ("Could not run 'aten::batch_norm_gather_stats' with arguments from
the 'CPU' backend"), where a GPU runs its CUDA kernel: ``torch.nn.SyncBatchNorm``'s steps (``batch_norm_stats``,
``batch_norm_gather_stats``/``_with_counts``, ``batch_norm_elemt``, ``batch_norm_backward_reduce``,
``batch_norm_backward_elemt``) and the matrix products with a result dtype of their own (``mm``, ``bmm``, ``addmm``,
``baddbmm`` with ``out_dtype``), and cuDNN's convolutions called by name (``cudnn_convolution``, ``_transpose``: the
emulated device says cuDNN is there, ``cudnn.py``). Each kernel here takes the CUDA kernel's steps in the same order and accumulation
type (``aten/src/ATen/native/cuda/Normalization.cuh``, ``Blas.cpp``) with torch's operations; the device mode runs
it on device tensors, with itself on, so the operations it makes are device work (recorded in a capture, replayed)
(``dispatch.py``, ``_OpInfo.python_kernel``). On host tensors the operation is refused as on a GPU build.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

aten = torch.ops.aten


def _acc(dtype: torch.dtype) -> torch.dtype:
    """CUDA's accumulation type for a floating dtype (``at::acc_type<T, true>``)."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def _per_channel(t: torch.Tensor) -> torch.Tensor:
    """``t`` (N, C, *) as (C, everything else): the reduction of a batch norm over all but the channel."""
    return t.transpose(0, 1).reshape(t.shape[1], -1)


def _suggested_format(t: torch.Tensor) -> torch.memory_format:
    """ATen's ``suggest_memory_format``: channels-last where the tensor is laid out so, else contiguous."""
    if t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous():
        return torch.channels_last
    if t.dim() == 5 and t.is_contiguous(memory_format=torch.channels_last_3d) and not t.is_contiguous():
        return torch.channels_last_3d
    return torch.contiguous_format


def _channel_view(v: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return v.reshape((1, -1) + (1,) * (like.dim() - 2))


def batch_norm_stats(input: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Per channel: the mean and the inverse of the biased standard deviation, in the accumulation type."""
    x = _per_channel(input).to(_acc(input.dtype))
    var, mean = torch.var_mean(x, dim=1, correction=0)
    return mean, torch.rsqrt(var + eps)


def batch_norm_gather_stats_with_counts(input: torch.Tensor, mean: torch.Tensor, invstd: torch.Tensor,
                                        running_mean: torch.Tensor | None, running_var: torch.Tensor | None,
                                        momentum: float, eps: float, counts: torch.Tensor
                                        ) -> tuple[torch.Tensor, torch.Tensor]:
    """Each process's (mean, invstd, count) merged one after another as CUDA's ``batch_norm_reduce_statistics_kernel``
    merges them (Chan's update), and the running statistics moved by ``momentum`` (the unbiased variance)."""
    acc = _acc(mean.dtype)
    avg = torch.zeros(mean.shape[1], dtype=acc, device=mean.device)
    var_n = torch.zeros_like(avg)
    n = torch.zeros_like(avg)
    for j in range(mean.shape[0]):
        count = counts[j].to(acc)
        m = mean[j].to(acc)
        v = (torch.reciprocal(invstd[j].to(acc)) ** 2 - eps) * count
        factor = torch.reciprocal(n + count)
        var_n = var_n + v + (avg - m) ** 2 * n * count * factor
        avg = n * factor * avg + count * factor * m
        n = n + count
    save_mean = avg.to(mean.dtype)
    save_invstd = torch.rsqrt(var_n / n + eps).to(mean.dtype)
    with torch.no_grad():
        if running_mean is not None:
            running_mean.copy_((1 - momentum) * running_mean.to(acc) + momentum * avg)
        if running_var is not None:
            running_var.copy_((1 - momentum) * running_var.to(acc) + momentum * var_n / (n - 1))
    return save_mean, save_invstd


def batch_norm_gather_stats(input: torch.Tensor, mean: torch.Tensor, invstd: torch.Tensor,
                            running_mean: torch.Tensor | None, running_var: torch.Tensor | None,
                            momentum: float, eps: float, count: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch_norm_gather_stats_with_counts`` with every process's count ``count``."""
    counts = torch.full((mean.shape[0],), float(count), dtype=mean.dtype, device=mean.device)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts)


def batch_norm_elemt(input: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None,
                     mean: torch.Tensor, invstd: torch.Tensor, eps: float, *, out: torch.Tensor | None = None
                     ) -> torch.Tensor:
    """``(input - mean) * invstd * weight + bias`` per channel, computed in the accumulation type."""
    acc = _acc(input.dtype)
    y = (input.to(acc) - _channel_view(mean.to(acc), input)) * _channel_view(invstd.to(acc), input)
    if weight is not None:
        y = y * _channel_view(weight.to(acc), input)
    if bias is not None:
        y = y + _channel_view(bias.to(acc), input)
    if out is None:
        out = torch.empty_like(input, memory_format=_suggested_format(input))
    return out.copy_(y)


def batch_norm_backward_reduce(grad_out: torch.Tensor, input: torch.Tensor, mean: torch.Tensor, invstd: torch.Tensor,
                               weight: torch.Tensor | None, input_g: bool, weight_g: bool, bias_g: bool
                               ) -> tuple[torch.Tensor | None, ...]:
    """Per channel: ``sum(dy)``, ``sum(dy * (x - mean))`` (when the input's gradient is wanted), the weight's and the
    bias's gradients (when wanted), as CUDA's ``batch_norm_backward_reduce_kernel`` returns them."""
    acc = _acc(input.dtype)
    dy = _per_channel(grad_out).to(acc)
    xmu = _per_channel(input).to(acc) - mean.to(acc)[:, None]
    sum_dy = dy.sum(1)
    sum_dy_xmu = (dy * xmu).sum(1)
    stat = mean.dtype
    wdtype = weight.dtype if weight is not None else stat
    return (sum_dy.to(stat) if input_g else None, sum_dy_xmu.to(stat) if input_g else None,
            (sum_dy_xmu * invstd.to(acc)).to(wdtype) if weight_g else None,
            sum_dy.to(wdtype) if bias_g else None)


def batch_norm_backward_elemt(grad_out: torch.Tensor, input: torch.Tensor, mean: torch.Tensor, invstd: torch.Tensor,
                              weight: torch.Tensor | None, sum_dy: torch.Tensor, sum_dy_xmu: torch.Tensor,
                              count: torch.Tensor) -> torch.Tensor:
    """The input's gradient from the reduced sums over all processes: ``count`` is each process's element count."""
    acc = _acc(input.dtype)
    norm = torch.reciprocal(count.to(acc).sum())
    m_dy = sum_dy.to(acc) * norm
    istd = invstd.to(acc)
    factor_1 = sum_dy_xmu.to(acc) * norm * istd * istd
    factor_2 = istd * (weight.to(acc) if weight is not None else 1)
    xmu = input.to(acc) - _channel_view(mean.to(acc), input)
    grad = (grad_out.to(acc) - _channel_view(m_dy, input) - xmu * _channel_view(factor_1, input)) * _channel_view(
        factor_2, input)
    return torch.empty_like(input, memory_format=_suggested_format(input)).copy_(grad)


def _product(of: Callable[..., torch.Tensor], operands: int) -> Callable[..., torch.Tensor]:
    """A matrix product with ``out_dtype`` (after its ``operands`` tensors): computed in the inputs' accumulation
    type and given in ``out_dtype``, refused in the CUDA kernel's words where CUDA refuses it (float16 and bfloat16
    inputs may give float32; any other input only its own dtype)."""
    def kernel(*args: Any, out: torch.Tensor | None = None, **kwargs: Any) -> torch.Tensor:
        tensors, out_dtype = args[:operands], args[operands]
        mat = tensors[-1]
        if out is not None and out.dtype != out_dtype:
            raise RuntimeError("out_dtype must be the same as the dtype of the provided out tensor")
        if not (out_dtype == mat.dtype or (out_dtype == torch.float32 and mat.dtype in (torch.float16, torch.bfloat16))):
            raise RuntimeError("out_dtype must be the same as input dtype or fp32 for fp16/bf16 inputs")
        if operands == 3 and tensors[0].dtype not in (out_dtype, mat.dtype):
            raise RuntimeError("self dtype must match either out_dtype or mat1 dtype")
        acc = _acc(mat.dtype)
        result = of(*(t.to(acc) for t in tensors), **kwargs).to(out_dtype)
        return result if out is None else out.copy_(result)
    return kernel


def cudnn_convolution(input: torch.Tensor, weight: torch.Tensor, padding: Any, stride: Any, dilation: Any, groups: int,
                      benchmark: bool, deterministic: bool, allow_tf32: bool) -> torch.Tensor:
    """cuDNN's convolution without a bias, as ``convolution`` computes it (the flags choose among cuDNN's algorithms)."""
    return aten.convolution.default(input, weight, None, stride, padding, dilation, False, [0] * len(padding), groups)


def cudnn_convolution_transpose(input: torch.Tensor, weight: torch.Tensor, padding: Any, output_padding: Any,
                                stride: Any, dilation: Any, groups: int, benchmark: bool, deterministic: bool,
                                allow_tf32: bool) -> torch.Tensor:
    """cuDNN's transposed convolution without a bias, as ``convolution`` computes it."""
    return aten.convolution.default(input, weight, None, stride, padding, dilation, True, output_padding, groups)


KERNELS: dict[Any, Callable[..., Any]] = {
    aten.cudnn_convolution.default: cudnn_convolution,
    aten.cudnn_convolution_transpose.default: cudnn_convolution_transpose,
    aten.batch_norm_stats.default: batch_norm_stats,
    aten.batch_norm_gather_stats.default: batch_norm_gather_stats,
    aten.batch_norm_gather_stats_with_counts.default: batch_norm_gather_stats_with_counts,
    aten.batch_norm_elemt.default: batch_norm_elemt,
    aten.batch_norm_elemt.out: batch_norm_elemt,
    aten.batch_norm_backward_reduce.default: batch_norm_backward_reduce,
    aten.batch_norm_backward_elemt.default: batch_norm_backward_elemt,
}
for _name, _of, _operands in (("mm", torch.mm, 2), ("bmm", torch.bmm, 2), ("addmm", torch.addmm, 3),
                               ("baddbmm", torch.baddbmm, 3)):
    _op = getattr(aten, _name)
    for _overload in ("dtype", "dtype_out"):
        if hasattr(_op, _overload):
            KERNELS[getattr(_op, _overload)] = _product(_of, _operands)
