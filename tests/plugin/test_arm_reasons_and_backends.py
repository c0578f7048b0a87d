"""Why an arm cannot run (the text an OWED skip shows) and which backend an arm gets: ``seam.pytest_plugin``."""

from __future__ import annotations

import pytest
import torch

from seam.arms import NO_BACKEND
from seam import CudaBackend, EmulatedBackend
from seam.errors import CaptureUnsupportedError
from seam.pytest_plugin import arm_unavailable_reason, make_backend, on_arm
from seam.torch_cuda import is_emulating


def test_without_a_gpu_the_cuda_arm_says_what_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert arm_unavailable_reason("cuda") == (
        "cuda arm needs an NVIDIA GPU with a CUDA build of torch (torch.cuda.is_available() is False)")


def test_the_rocm_arm_gives_the_registrys_reason_and_an_unknown_arm_a_reason_naming_it() -> None:
    assert arm_unavailable_reason("rocm") == NO_BACKEND["rocm"]
    assert arm_unavailable_reason("tpu") == "no backend for arm 'tpu' in this build"
    assert arm_unavailable_reason("cpu-emulated") is None


def test_the_cpu_emulated_arm_gets_the_cuda_backend_on_the_emulated_device_and_an_arm_without_a_backend_is_refused_by_name() -> None:
    with on_arm("cpu-emulated"):
        backend = make_backend("cpu-emulated")
        assert type(backend) is CudaBackend and not isinstance(backend, EmulatedBackend)
        assert backend.alloc((2,)).device == torch.device("cuda", 0)
    assert not is_emulating(), "on_arm leaves the emulation at its end"
    with pytest.raises(ValueError, match=r"^no backend for arm 'rocm'$"):
        make_backend("rocm")


def test_the_backend_fixture_runs_the_cpu_emulated_case_inside_the_emulation_and_names_its_arm(
        backend: CudaBackend, arm: str) -> None:
    if arm != "cpu-emulated":
        pytest.skip("the cpu-emulated arm's case: on the cuda arm the backend is the GPU's")
    assert is_emulating() and type(backend) is CudaBackend
    assert backend.alloc((2,)).device == torch.device("cuda", 0)


def test_the_cuda_arm_gets_the_cuda_backend() -> None:
    if torch.cuda.is_available():
        assert isinstance(make_backend("cuda"), CudaBackend)
    else:  # the CUDA backend itself refuses, naming what it needs: make_backend did try it
        with pytest.raises(CaptureUnsupportedError, match="CudaBackend needs a CUDA device"):
            make_backend("cuda")
