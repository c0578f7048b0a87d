"""torch's operations whose only kernel is CUDA's run on the device: ``SyncBatchNorm``'s steps and the matrix
products with a result dtype of their own.

A CPU-only torch has no kernel for them ("Could not run 'aten::batch_norm_gather_stats' with arguments from the 'CPU'
backend"); PyTorch's ``test_batch_norm_gather_stats`` passed on the H100 and failed emulated (session 25).
``seam/torch_cuda/cuda_kernels.py`` takes the CUDA kernels' steps; here each is held to the CPU's batch norm (forward,
running statistics, gradients) and to a product in float32.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

CUDA = torch.device("cuda", 0)


def test_pytorchs_gather_stats_case(torch_cuda: str) -> None:
    mean, invstd = torch.batch_norm_gather_stats(
        torch.randn(1, 3, 3, 3, device="cuda"), mean=torch.ones(2, 3, device="cuda"),
        invstd=torch.ones(2, 3, device="cuda"), running_mean=None, running_var=None, momentum=0.1, eps=1e-5, count=2)
    assert mean.device == CUDA and invstd.device == CUDA
    torch.testing.assert_close(mean.cpu(), torch.ones(3))
    torch.testing.assert_close(invstd.cpu(), torch.ones(3))


def _batch(channels_last: bool = False) -> torch.Tensor:
    torch.manual_seed(0)
    x = torch.randn(6, 3, 4, 5) * 3 + 1
    return x.contiguous(memory_format=torch.channels_last) if channels_last else x


@pytest.mark.parametrize("channels_last", [False, True])
def test_two_processes_stats_merged_give_the_whole_batchs_forward_and_running_stats(torch_cuda: str,
                                                                                     channels_last: bool) -> None:
    x = _batch(channels_last)
    weight, bias = torch.randn(3), torch.randn(3)
    run_mean, run_var = torch.zeros(3), torch.ones(3)
    want = F.batch_norm(x, run_mean, run_var, weight, bias, training=True, momentum=0.1, eps=1e-5)
    dx = x.cuda()
    halves = (dx[:2], dx[2:])  # two processes' batches of different sizes, as SyncBatchNorm gathers them
    stats = [torch.batch_norm_stats(h, 1e-5) for h in halves]
    assert all(s.device == CUDA and s.dtype == torch.float32 for pair in stats for s in pair)
    mean_all = torch.stack([m for m, _ in stats])
    invstd_all = torch.stack([i for _, i in stats])
    counts = torch.tensor([2.0 * 20, 4.0 * 20], device="cuda")
    d_run_mean, d_run_var = torch.zeros(3, device="cuda"), torch.ones(3, device="cuda")
    mean, invstd = torch.batch_norm_gather_stats_with_counts(dx, mean_all, invstd_all, d_run_mean, d_run_var,
                                                             0.1, 1e-5, counts)
    got = torch.batch_norm_elemt(dx, weight.cuda(), bias.cuda(), mean, invstd, 1e-5)
    assert got.device == CUDA
    assert got.is_contiguous(memory_format=torch.channels_last) == channels_last
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(d_run_mean.cpu(), run_mean, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(d_run_var.cpu(), run_var, rtol=1e-5, atol=1e-5)


def test_the_backward_steps_give_the_cpus_gradients(torch_cuda: str) -> None:
    x = _batch().requires_grad_()
    weight, bias = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    grad_out = torch.randn(6, 3, 4, 5)
    F.batch_norm(x, None, None, weight, bias, training=True, eps=1e-5).backward(grad_out)
    dx, dg = x.detach().cuda(), grad_out.cuda()
    mean, invstd = torch.batch_norm_stats(dx, 1e-5)
    sum_dy, sum_dy_xmu, grad_weight, grad_bias = torch.batch_norm_backward_reduce(
        dg, dx, mean, invstd, weight.detach().cuda(), True, True, True)
    count = torch.tensor([x.numel() // 3], dtype=torch.int32, device="cuda")
    grad_input = torch.batch_norm_backward_elemt(dg, dx, mean, invstd, weight.detach().cuda(), sum_dy, sum_dy_xmu,
                                                 count)
    assert grad_input.device == CUDA and grad_weight.device == CUDA
    torch.testing.assert_close(grad_input.cpu(), x.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(grad_weight.cpu(), weight.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(grad_bias.cpu(), bias.grad, rtol=1e-4, atol=1e-4)
    nothing = torch.batch_norm_backward_reduce(dg, dx, mean, invstd, None, False, False, False)
    assert all(t is None for t in nothing)


@pytest.mark.parametrize("op", ["mm", "bmm", "addmm", "baddbmm"])
def test_a_half_product_with_a_float32_result(torch_cuda: str, op: str) -> None:
    torch.manual_seed(0)
    batched = op in ("bmm", "baddbmm")
    a = torch.randn(*((2,) if batched else ()), 4, 8).half()
    b = torch.randn(*((2,) if batched else ()), 8, 3).half()
    bias = torch.randn(*((2,) if batched else ()), 4, 3)
    fn = getattr(torch, op)
    args = (bias, a, b) if op.startswith(("add", "badd")) else (a, b)
    want = fn(*(t.float() for t in args))
    got = fn(*(t.cuda() for t in args), out_dtype=torch.float32)
    assert got.device == CUDA and got.dtype == torch.float32
    torch.testing.assert_close(got.cpu(), want, rtol=1e-3, atol=1e-3)


def test_a_product_with_a_result_dtype_cuda_refuses(torch_cuda: str) -> None:
    a = torch.randn(4, 8, device="cuda")
    with pytest.raises(RuntimeError, match="out_dtype must be the same as input dtype or fp32 for fp16/bf16 inputs"):
        torch.mm(a, a.t(), out_dtype=torch.float16)
