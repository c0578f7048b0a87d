"""``torch.autocast("cuda")`` casts as CUDA's autocast does, on both arms (the H200's dtypes, torch 2.11:
``tests/fidelity/cuda_corpus.py`` class ``autocast``): matrix products in the autocast dtype; softmax, layer
norm, exp of a low-precision input in float32, where the CPU's autocast keeps bfloat16; host tensors
never cast; gradients flow through the casts. Leaving the emulation puts torch's CPU autocast back."""

from __future__ import annotations

import pytest
import torch


#: torch 2.12 gave ``rms_norm`` CUDA's float32 policy; torch 2.11 (the H100's, session 27) keeps the autocast dtype
_RMS_NORM_IN_FLOAT32 = torch._C._dispatch_has_kernel_for_dispatch_key("aten::rms_norm", "AutocastCUDA")


def _dtypes(dtype: torch.dtype) -> dict[str, torch.dtype]:
    x = torch.randn(4, 4, device="cuda")
    w = torch.randn(4, 4, device="cuda", requires_grad=True)
    host = torch.randn(4, 4)
    with torch.autocast("cuda", dtype=dtype):
        low = x @ w
        out = {
            "linear": torch.nn.functional.linear(x, w).dtype,
            "matmul": low.dtype,
            "softmax_of_low": torch.softmax(low, -1).dtype,
            "layer_norm_of_low": torch.nn.functional.layer_norm(low, (4,)).dtype,
            "rms_norm_of_low": torch.nn.functional.rms_norm(low, (4,)).dtype,
            "cudnn_convolution": torch.cudnn_convolution(x[None, None], w.detach()[None, None], (0, 0), (1, 1), (1, 1), 1,
                                                         False, True, True).dtype,
            "exp_of_low": torch.exp(low).dtype,
            "relu_of_low": torch.relu(low).dtype,
            "host_matmul": (host @ host).dtype,
            "cross_entropy_of_low": torch.nn.functional.cross_entropy(
                low, torch.zeros(4, dtype=torch.long, device="cuda")).dtype,
        }
        low.float().sum().backward()
    out["weight_grad"] = w.grad.dtype
    return out


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_autocast_on_the_device_casts_as_cuda_does(torch_cuda: str, dtype: torch.dtype) -> None:
    assert _dtypes(dtype) == {
        "linear": dtype, "matmul": dtype, "softmax_of_low": torch.float32, "layer_norm_of_low": torch.float32,
        "rms_norm_of_low": torch.float32 if _RMS_NORM_IN_FLOAT32 else dtype, "cudnn_convolution": dtype,
        "exp_of_low": torch.float32, "relu_of_low": dtype, "host_matmul": torch.float32,
        "cross_entropy_of_low": torch.float32, "weight_grad": torch.float32,
    }


def _cpu_autocast_dtypes() -> list[torch.dtype]:
    x = torch.randn(4, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = x @ x
        return [low.dtype, torch.softmax(low, -1).dtype, torch.nn.functional.layer_norm(low, (4,)).dtype]


def test_leaving_the_emulation_puts_the_cpus_autocast_back() -> None:
    from seam import emulate_cuda

    before = _cpu_autocast_dtypes()
    with emulate_cuda():
        _dtypes(torch.bfloat16)
    assert _cpu_autocast_dtypes() == before
    assert not torch.is_autocast_enabled("cpu")


def test_an_op_without_a_cuda_autocast_kernel_in_the_installed_torch_is_not_cast(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lists name an op's policy; whether it has one is the installed torch's word (its ``AutocastCUDA``
    kernels): ``rms_norm`` as torch 2.11 has it, without one, keeps the autocast dtype, as on the H100."""
    from seam import emulate_cuda
    from seam.torch_cuda import autocast

    torch_says = autocast.cuda_autocasts
    monkeypatch.setattr(autocast, "cuda_autocasts", lambda qualified: qualified != "rms_norm" and torch_says(qualified))
    with emulate_cuda():
        autocast.close()  # a registration made before the patch would be reused
        try:
            low = torch.randn(4, 4, device="cuda").bfloat16()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                assert torch.nn.functional.rms_norm(low, (4,)).dtype == torch.bfloat16
                assert torch.nn.functional.layer_norm(low, (4,)).dtype == torch.float32
        finally:
            autocast.close()


def test_every_op_the_installed_torchs_cuda_autocast_casts_has_a_policy_here() -> None:
    """An op given a CUDA autocast kernel by a newer torch needs its policy named in seam/torch_cuda/autocast.py's
    lists, or the emulation would not cast it (a CUDA build's ``_cudnn_rnn``, which the emulated device never reaches,
    apart: the H100's torch 2.11 listed it here)."""
    from seam.torch_cuda import autocast

    named = {*autocast.LOWER, *autocast.FP32, *autocast.PROMOTE, *autocast.BANNED}
    cast = {qualified.split("::")[1].split(".")[0] for qualified in torch._C._dispatch_get_all_op_names()
            if qualified.startswith("aten::") and autocast.cuda_autocasts(qualified[len("aten::"):])}
    assert sorted(cast - named - autocast.NOT_REACHED) == []
