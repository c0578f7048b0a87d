"""``torch.ctc_loss`` on the emulated device, with host targets and host length tensors beside device
log-probabilities, as a GPU takes them.

torch's C++ ``ctc_loss`` reads length tensors into host integer lists, moves host targets "to ``log_probs.device()``"
and builds the mean's divisor "with ``res.options()``" (``LossCTC.cpp``): on a GPU all of it lands on the device. Under
the emulation those steps read the CPU the device memory lives on, and with a dispatch mode on torch takes its
composite path, which keeps the lengths as tensors; so the device mode saw host tensors beside device memory and
refused them, where the H100 computed the loss (``scripts/mixed_devices_probe.py``: ``ctc_loss_host_targets``,
``ctc_loss_host_length_tensors``). Here the same steps run in Python with the device named: lengths read to the host
(a device length tensor is a device-to-host read, as on a GPU), host targets moved to the device, the loss computed
unreduced, then the mean or sum as torch's C++ takes it. Host log-probabilities take torch's own path.
"""

from __future__ import annotations

from typing import Any

import torch

from seam.torch_cuda.kinds import is_device
from seam.torch_cuda.runtime import DEVICE

_ctc_loss = torch.ctc_loss
#: at::Reduction
_NONE, _MEAN, _SUM = 0, 1, 2


def _host_lengths(lengths: Any, name: str) -> Any:
    """A length tensor read into a host list (torch's ``to(kCPU, kLong)``); a list as it is."""
    if not isinstance(lengths, torch.Tensor):
        return lengths
    if lengths.dtype.is_floating_point or lengths.dtype.is_complex or lengths.dtype == torch.bool:
        raise RuntimeError(f"{name} must be integral")
    return lengths.to("cpu", torch.long).reshape(-1).tolist()


def ctc_loss(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: int = _MEAN, zero_infinity: bool = False) -> torch.Tensor:
    """``torch.ctc_loss`` (what ``F.ctc_loss`` and ``nn.CTCLoss`` call): see the module docstring."""
    if not (isinstance(log_probs, torch.Tensor) and isinstance(targets, torch.Tensor) and is_device(log_probs)):
        return _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)
    input_lengths = _host_lengths(input_lengths, "input_lengths")
    target_lengths = _host_lengths(target_lengths, "target_lengths")
    if not is_device(targets):
        targets = targets.to(DEVICE, torch.long)
    res = _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _NONE, zero_infinity)
    if reduction == _MEAN:
        divisor = torch.tensor(list(target_lengths), dtype=res.dtype, device=DEVICE).clamp_min(1)
        return (res / divisor).mean()
    if reduction == _SUM:
        return res.sum()
    return res


def patches() -> list[tuple[Any, str, Any]]:
    """What ``emulate_cuda()`` puts in place (``install.py``)."""
    return [(torch, "ctc_loss", ctc_loss)]
