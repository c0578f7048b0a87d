"""Host tensors beside device tensors: what a GPU takes and what it refuses, in its words.

From the H100 (session 22, ``evidence/h100-device-calls-2026-12-05-session22.txt``): an operation whose kernel is its
CompositeExplicitAutograd one has no device check of its own, so the operations it makes decide
(``pack_padded_sequence`` takes host lengths, and refuses device lengths in its own C++ check; ``embedding``'s host
ids are refused by its ``index_select``); clamp's
tensor bounds are checked even when 0-dim, where most kernels take a 0-dim host tensor as a scalar; and torch's
device check names the generated kernel wrapper, whose name a structured operation writes name first
(``wrapper_CUDA_clamp_Tensor``) and another overload first (``wrapper_CUDA__index_select``).
"""

from __future__ import annotations

import re

import pytest
import torch

SAME_DEVICE = "Expected all tensors to be on the same device, but got {} is on cpu, different from other tensors on " \
              "cuda:0 (when checking argument in method {})"


def _refused(arg: str, method: str) -> str:
    return re.escape(SAME_DEVICE.format(arg, method))


def test_pack_padded_sequence_takes_host_lengths_and_keeps_its_batch_sizes_on_the_host(torch_cuda: str) -> None:
    torch.manual_seed(0)
    padded = torch.randn(3, 2, 4)
    packed = torch.nn.utils.rnn.pack_padded_sequence(padded.cuda(), torch.tensor([3, 2]))
    want = torch.nn.utils.rnn.pack_padded_sequence(padded, torch.tensor([3, 2]))
    assert packed.data.device == torch.device("cuda", 0) and packed.batch_sizes.device == torch.device("cpu")
    assert torch.equal(packed.data.cpu(), want.data) and torch.equal(packed.batch_sizes, want.batch_sizes)


def test_pack_padded_sequence_refuses_device_lengths_in_its_own_words(torch_cuda: str) -> None:
    # torch's C++ checks the lengths' device before the composite runs; the emulation read the CPU there, and its
    # PackedSequence refused device batch sizes later, in other words (a ValueError)
    with pytest.raises(RuntimeError, match=re.escape("'lengths' argument should be a 1D CPU int64 tensor, but got 1D "
                                                     "cuda:0 Long tensor")):
        torch.nn.utils.rnn.pack_padded_sequence(torch.randn(3, 2, 4, device="cuda"), torch.tensor([3, 2], device="cuda"))


def test_embedding_refuses_host_ids_in_its_index_selects_words(torch_cuda: str) -> None:
    weight = torch.randn(4, 3, device="cuda")
    with pytest.raises(RuntimeError, match=_refused("index", "wrapper_CUDA__index_select")):
        torch.nn.functional.embedding(torch.tensor([0, 1]), weight)


def test_clamp_refuses_a_0_dim_host_bound_where_lerp_takes_a_0_dim_host_weight(torch_cuda: str) -> None:
    x = torch.randn(4, 3, device="cuda")
    with pytest.raises(RuntimeError, match=_refused("min", "wrapper_CUDA_clamp_Tensor")):
        torch.clamp(x, min=torch.tensor(0.0))
    assert torch.equal(torch.lerp(x, x, torch.tensor(0.5)).cpu(), x.cpu())


@pytest.mark.parametrize("call, arg, method", [
    (lambda x: x @ torch.ones(3, 2), "mat2", "wrapper_CUDA_mm"),
    (lambda x: x.index_select(0, torch.tensor([0, 1])), "index", "wrapper_CUDA__index_select"),
    (lambda x: torch.searchsorted(torch.arange(4.0, device="cuda"), torch.tensor([1.5])), "self",
     "wrapper_CUDA_Tensor_searchsorted"),
], ids=["mm", "index_select", "searchsorted"])
def test_the_device_check_names_the_kernel_wrapper_as_torch_generates_it(torch_cuda: str, call, arg, method) -> None:
    with pytest.raises(RuntimeError, match=_refused(arg, method)):
        call(torch.randn(4, 3, device="cuda"))
