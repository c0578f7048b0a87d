"""Every fidelity program gives, on every arm, the signature real CUDA gives (docs/fidelity-seam.md)."""

from __future__ import annotations

import pytest

from seam import Backend, CaptureDependencyError, CaptureInvalidatedError, CaptureWarmupError, PageableCopyError
from seam import collector
from seam.capture_guard import translate_cuda_error

from . import raw_cuda
from .probe import observe
from .programs import CLASS, EXCEPTIONS, EXPECTED, PROGRAMS, RAW, RAW_ONLY


def expected_on(arm: str, name: str) -> str:
    """CUDA's signature, or, on the emulator, the documented exception's."""
    if arm == "cpu-emulated" and name in EXCEPTIONS:
        return EXCEPTIONS[name][0]
    return EXPECTED[name]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_program_gives_what_cuda_gives(backend: Backend, arm: str, name: str) -> None:
    got = observe(PROGRAMS[name], backend)
    assert got.text() == expected_on(arm, name)
    assert not collector.any_capture_open(), "a program leaves no capture open, whatever it raised"


def test_the_corpus_is_large_and_every_row_is_classed_and_witnessed_by_a_real_raw_program() -> None:
    assert len(PROGRAMS) >= 60
    assert set(CLASS) == set(PROGRAMS) == set(EXPECTED)
    assert set(RAW.values()) | set(RAW_ONLY) <= set(raw_cuda.PROGRAMS)
    assert not set(EXCEPTIONS) - set(PROGRAMS)


@pytest.mark.parametrize(("text", "cls"), [
    # The exact texts the H200 printed (evidence/h200-issue8-e1861e4.txt).
    ("CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`", CaptureWarmupError),
    ("Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned. "
     "Please use tensor.pin_memory() or allocate the tensor with pin_memory=True.", PageableCopyError),
    ("CUDA error: dependency created on uncaptured work in another stream", CaptureDependencyError),
    ("CUDA error: operation not permitted when stream is capturing", CaptureInvalidatedError),
])
def test_raw_cuda_refusals_are_said_as_the_seams_errors(text: str, cls: type) -> None:
    err = translate_cuda_error(RuntimeError(text), "aten.mm.default")
    assert isinstance(err, cls) and "aten.mm.default" in str(err)


def test_an_unrelated_runtime_error_is_not_translated() -> None:
    assert translate_cuda_error(RuntimeError("shape mismatch"), "aten.mm.default") is None
