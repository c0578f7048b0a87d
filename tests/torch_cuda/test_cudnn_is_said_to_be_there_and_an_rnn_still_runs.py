"""cuDNN is said to be there, as on a GPU, an RNN on the device still runs and gives the CPU's values, and cuDNN's
convolutions called by name compute the convolution.

PyTorch's ``TEST_CUDNN`` (``torch.backends.cudnn.is_acceptable`` of a device tensor) gates 14 cases of
``test_cuda.py``: on the H100 they passed, emulated they were skipped (session 25). ``seam/torch_cuda/cudnn.py``;
``torch.cudnn_convolution``: ``seam/torch_cuda/cuda_kernels.py``.
"""

from __future__ import annotations

import pytest
import torch


def test_cudnn_is_available_with_a_version_and_takes_device_tensors(torch_cuda: str) -> None:
    cudnn = torch.backends.cudnn
    assert cudnn.is_available(), "cuDNN is not said to be available"
    assert isinstance(cudnn.version(), int) and cudnn.version() >= 90000
    assert cudnn.is_acceptable(torch.ones(2, device="cuda"))
    assert not cudnn.is_acceptable(torch.ones(2))
    assert not cudnn.is_acceptable(torch.ones(2, device="cuda", dtype=torch.int64))


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_an_rnn_on_the_device_gives_the_cpus_output_and_gradients(torch_cuda: str, kind: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # cuDNN's RNN computes in TF32 where allowed (torch's default): up to 7e-4 off the CPU's float32 on the H100
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
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


def test_cudnn_flags_set_and_restore_the_benchmark_limit(torch_cuda: str) -> None:
    before = torch.backends.cudnn.benchmark_limit
    with torch.backends.cudnn.flags(enabled=True, benchmark=True, benchmark_limit=3):
        assert torch.backends.cudnn.benchmark_limit == 3
    assert torch.backends.cudnn.benchmark_limit == before


@pytest.mark.parametrize("transposed", [False, True])
def test_cudnns_convolution_called_by_name_computes_the_convolution(torch_cuda: str, transposed: bool) -> None:
    torch.manual_seed(0)
    x, w = torch.randn(2, 3, 6, 6), torch.randn(3, 3, 3, 3)
    if transposed:
        want = torch.nn.functional.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)
        got = torch.cudnn_convolution_transpose(x.cuda(), w.cuda(), (1, 1), (1, 1), (2, 2), (1, 1), 1, False, True,
                                                False)
    else:
        want = torch.nn.functional.conv2d(x, w, stride=2, padding=1)
        got = torch.cudnn_convolution(x.cuda(), w.cuda(), (1, 1), (2, 2), (1, 1), 1, False, True, False)
    assert got.device == torch.device("cuda", 0)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-4, atol=1e-4)
