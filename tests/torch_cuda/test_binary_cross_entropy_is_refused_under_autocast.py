"""Under ``torch.autocast("cuda")``, ``binary_cross_entropy`` (and ``nn.BCELoss``) of device tensors is refused
in torch's words, whatever their dtype; its ``out=`` overload, its backward, host tensors and a disabled region
are not (the H200, torch 2.11: ``.probe`` of session 13). Both arms."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

REFUSAL = ("torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
           "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
           "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
           "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
           "safe to autocast.")


@pytest.fixture
def pair(torch_cuda: str) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return torch.rand(4, device="cuda"), torch.rand(4, device="cuda")


@pytest.mark.parametrize("call", [
    lambda a, b: F.binary_cross_entropy(a, b),
    lambda a, b: torch.nn.BCELoss()(a, b),
    lambda a, b: F.binary_cross_entropy(a.half(), b.half()),
], ids=["functional", "module", "half"])
def test_binary_cross_entropy_of_device_tensors_is_refused_under_autocast(pair, call) -> None:  # noqa: ANN001
    with torch.autocast("cuda"), pytest.raises(RuntimeError) as refused:
        call(*pair)
    assert type(refused.value) is RuntimeError and str(refused.value) == REFUSAL


def test_what_autocast_does_not_refuse(pair) -> None:  # noqa: ANN001
    a, b = pair
    plain = F.binary_cross_entropy(a, b)
    with torch.autocast("cuda"):
        assert torch.equal(F.binary_cross_entropy(a.cpu(), b.cpu()), plain.cpu())  # host tensors
        assert F.binary_cross_entropy_with_logits(a, b).dtype == torch.float32
        out = torch.empty(0, device="cuda")  # its value is not asserted: the out= kernel's own (CPU and H200 alike)
        assert torch.ops.aten.binary_cross_entropy.out(a, b, out=out) is out and out.device.type == "cuda"
        grad = torch.ops.aten.binary_cross_entropy_backward(torch.ones((), device="cuda"), a, b)
        assert grad.shape == (4,) and grad.device.type == "cuda"
        with torch.autocast("cuda", enabled=False):
            assert torch.equal(F.binary_cross_entropy(a, b), plain)
    assert torch.equal(F.binary_cross_entropy(a, b), plain)
