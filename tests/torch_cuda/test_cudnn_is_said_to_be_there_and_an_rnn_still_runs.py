"""cuDNN is said to be there, as on a GPU, and an RNN on the device still runs and gives the CPU's values.

PyTorch's ``TEST_CUDNN`` (``torch.backends.cudnn.is_acceptable`` of a device tensor) gates 14 cases of
``test_cuda.py``: on the H100 they passed, emulated they were skipped (session 25). ``seam/torch_cuda/cudnn.py``.
"""

from __future__ import annotations

import pytest
import torch


def test_cudnn_is_available_with_a_version_and_takes_device_tensors(torch_cuda: str) -> None:
    cudnn = torch.backends.cudnn
    if torch_cuda == "cpu-emulated" and torch._C._has_cudnn:
        pytest.skip("a CUDA build of torch without a GPU: the emulation turns its cuDNN off (seam/torch_cuda/cudnn.py)")
    assert cudnn.is_available(), "cuDNN is not said to be available"
    assert isinstance(cudnn.version(), int) and cudnn.version() >= 90000
    assert cudnn.is_acceptable(torch.ones(2, device="cuda"))
    assert not cudnn.is_acceptable(torch.ones(2))
    assert not cudnn.is_acceptable(torch.ones(2, device="cuda", dtype=torch.int64))


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_an_rnn_on_the_device_gives_the_cpus_output_and_gradients(torch_cuda: str, kind: str) -> None:
    torch.manual_seed(0)
    host = getattr(torch.nn, kind)(4, 8, num_layers=2, bidirectional=True)
    device = getattr(torch.nn, kind)(4, 8, num_layers=2, bidirectional=True)
    device.load_state_dict(host.state_dict())
    device = device.cuda()
    x = torch.randn(5, 3, 4)
    want = host(x)[0]
    got = device(x.cuda())[0]
    assert got.device == torch.device("cuda", 0)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4)
    want.sum().backward()
    got.sum().backward()
    for (name, p), q in zip(host.named_parameters(), device.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, rtol=1e-4, atol=1e-4, msg=lambda m: f"{name}: {m}")
