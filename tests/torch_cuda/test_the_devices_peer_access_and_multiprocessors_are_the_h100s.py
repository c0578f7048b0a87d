"""Two answers engines read before they size work, as the H100 gives them (torch 2.11, session 27's device call):
``torch.cuda.can_device_access_peer(0, 0)`` is False (the emulator raised AttributeError: a CPU-only torch has no
``torch._C._cuda_canDeviceAccessPeer``), and the device has 132 multiprocessors (the emulator said 1; Triton's
persistent kernels and torch's inductor size their grids by it)."""

from __future__ import annotations

import pytest
import torch


def test_the_one_device_is_not_its_own_peer_and_another_is_refused(torch_cuda: str) -> None:
    assert torch.cuda.can_device_access_peer(0, 0) is False
    with pytest.raises(AssertionError, match="Invalid peer device id"):
        torch.cuda.can_device_access_peer(0, torch.cuda.device_count())


def test_the_device_has_the_h100s_multiprocessors(torch_cuda: str) -> None:
    if torch_cuda == "cuda" and not any(name in torch.cuda.get_device_name() for name in ("H100", "H200")):
        pytest.skip("the figure is the H100's (and the H200's); this GPU is another")
    assert torch.cuda.get_device_properties(0).multi_processor_count == 132
