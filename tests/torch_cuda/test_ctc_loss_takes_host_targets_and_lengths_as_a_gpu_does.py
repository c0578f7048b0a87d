"""``ctc_loss`` with device log-probabilities takes host targets and host length tensors, as a GPU does, and computes
what the CPU computes, its gradient too.

torch's C++ moves host targets to the log-probabilities' device and builds the mean's divisor on the result's device;
under the emulation both read the CPU for device memory, so the device mode refused the host targets and lengths
beside device memory, where the H100 computed the loss (``scripts/mixed_devices_probe.py``, session 22).
``seam/torch_cuda/ctc.py`` takes the same steps naming the device.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F


def _inputs(batched: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    log_probs = torch.randn(6, 2, 5).log_softmax(2)
    targets = torch.tensor([[1, 2, 3], [1, 1, 0]])
    if not batched:
        return log_probs[:, 0], targets[0]
    return log_probs, targets


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("lengths", ["tensors", "lists"])
def test_host_targets_and_lengths_give_the_cpus_loss(torch_cuda: str, reduction: str, lengths: str) -> None:
    log_probs, targets = _inputs()
    inputs, target_lengths = ([6, 5], [3, 2]) if lengths == "lists" else (torch.tensor([6, 5]), torch.tensor([3, 2]))
    want = F.ctc_loss(log_probs, targets, inputs, target_lengths, reduction=reduction)
    got = F.ctc_loss(log_probs.cuda(), targets, inputs, target_lengths, reduction=reduction)
    assert got.device == torch.device("cuda", 0)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)


def test_device_targets_with_host_length_tensors_give_the_cpus_loss_and_gradient(torch_cuda: str) -> None:
    log_probs, targets = _inputs()
    host = log_probs.clone().requires_grad_()
    device = log_probs.cuda().requires_grad_()
    want = F.ctc_loss(host, targets, torch.tensor([6, 5]), torch.tensor([3, 2]))
    got = F.ctc_loss(device, targets.cuda(), torch.tensor([6, 5]), torch.tensor([3, 2]))
    want.backward()
    got.backward()
    torch.testing.assert_close(got.cpu(), want.detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(device.grad.cpu(), host.grad, rtol=1e-5, atol=1e-5)


def test_an_unbatched_input_and_zero_infinity_give_the_cpus_loss(torch_cuda: str) -> None:
    log_probs, targets = _inputs(batched=False)
    impossible = torch.tensor([1, 1, 1, 1])  # four repeats need seven frames: an infinite loss, zeroed
    for tgt, length in ((targets, 3), (impossible, 4)):
        want = F.ctc_loss(log_probs, tgt, torch.tensor(6), torch.tensor(length), zero_infinity=True)
        got = F.ctc_loss(log_probs.cuda(), tgt, torch.tensor(6), torch.tensor(length), zero_infinity=True)
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)
