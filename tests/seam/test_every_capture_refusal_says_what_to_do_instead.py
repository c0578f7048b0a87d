"""Every refusal of the capture guard, word for word, and the guard that CUDA pushes, driven on the CPU.

A user who meets a refusal reads its message: it names the call and what to do instead. Rows give
the whole message of each refusal the emulator makes. ``translate_cuda_error`` turns torch's raw
CUDA refusal text into the seam error of the same meaning (the H200's text, given here as a
``RuntimeError``), and ``CaptureGuard`` (the mode ``CudaBackend`` pushes) is pushed by hand over CPU
tensors it is told are device memory, so what it refuses, lets through and translates shows here.
"""

from __future__ import annotations

from typing import Callable

import pytest
import torch

from seam import (
    Backend,
    BreakableGraph,
    CaptureInvalidatedError,
    CaptureMode,
    CaptureStateError,
    CaptureSyncError,
    EmulatedBackend,
    GraphCaptureScope,
    PageableCopyError,
)
from seam.capture_guard import CaptureGuard, translate_cuda_error
from seam.errors import CaptureDependencyError, CaptureWarmupError

from .conftest import skip_a_second_emulator

Work = Callable[[EmulatedBackend, torch.Tensor], object]


def outside_capture(b: EmulatedBackend, d: torch.Tensor) -> object:
    with b.use_queue(b.new_queue()):
        return d * 2


#: name: (work inside a FULL capture on the default queue, error class, the whole message).
REFUSALS: dict[str, tuple[Work, type[Exception], str]] = {
    "item": (lambda b, d: d[0].item(), CaptureSyncError,
             "aten._local_scalar_dense.default while a graph capture is open reads a device value on the host; "
             "move it out of the captured region or keep the value on the device"),
    "boolean-mask": (lambda b, d: d[d > 0], CaptureSyncError,
                     "aten.index.Tensor with a boolean mask inside graph capture: the result's shape depends on "
                     "device data (a host sync); use torch.where or a fixed-size index instead"),
    "tolist": (lambda b, d: d.tolist(), CaptureSyncError,
               "Tensor.tolist() while a graph capture is open reads device memory on the host; read it after the "
               "capture (replay, then read) or keep it on the device"),
    "truth-value": (lambda b, d: bool(d[0]), CaptureSyncError,
                    "Tensor.__bool__() while a graph capture is open reads device memory on the host; read it after "
                    "the capture (replay, then read) or keep it on the device"),
    "tensor-from-data": (lambda b, d: torch.tensor([1.0], device="cpu"), PageableCopyError,
                         "torch.tensor(data, device=...) inside graph capture copies pageable host data to the "
                         "device; make the tensor before the capture and refresh it in place (PersistentStepInput)"),
    "allocating-off-the-capture": (outside_capture, CaptureStateError,
                                   "aten.mul.Tensor on a queue outside the open graph capture allocates device memory: "
                                   "CUDA refuses the allocation whenever its cache cannot serve it (global capture "
                                   "mode); run it before the capture, or on the capturing queue, or in place into a "
                                   "buffer made before the capture"),
    "blocking-pinned-copy": (lambda b, d: d.copy_(b.alloc_pinned((4,))), CaptureSyncError,
                             "a BLOCKING copy between pinned host memory and the device inside graph capture waits on "
                             "the host (CUDA refuses it: H200, tensor.copy_ without non_blocking); pass "
                             "non_blocking=True or use backend.copy"),
}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_each_refusal_inside_a_capture_gives_its_whole_reason_and_the_fix(name: str) -> None:
    if name == "tolist":
        skip_a_second_emulator("the refusal of Tensor.tolist(), word for word")
    work, error, message = REFUSALS[name]
    b = EmulatedBackend()
    d = b.to_device(torch.tensor([1.0, 2.0, 2.0, 3.0]))
    with pytest.raises(error) as refused:
        with GraphCaptureScope(b, b.default_queue(), BreakableGraph(b, CaptureMode.FULL)):
            work(b, d)
    assert str(refused.value) == message
    assert not b.capturing


def test_a_non_blocking_pinned_copy_inside_a_capture_is_allowed_and_replays() -> None:
    b = EmulatedBackend()
    d = b.alloc((2,))
    p = b.alloc_pinned((2,))
    g = BreakableGraph(b, CaptureMode.FULL)
    with GraphCaptureScope(b, b.default_queue(), g):
        d.copy_(p, non_blocking=True)
    b.host_write(p, torch.tensor([7.0, 8.0]))
    g.replay()
    assert d.tolist() == [7.0, 8.0]


# ---- torch's raw CUDA refusals said as the seam's errors -------------------------------------
CUDA_TEXT: dict[str, tuple[str, type[Exception], str]] = {
    "cublas": ("CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`", CaptureWarmupError,
               "the first cuBLAS use happened inside a capture; run the forward once before capturing "
               "(capture_one's warmups)"),
    "pageable": ("Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned.",
                 PageableCopyError,
                 "copy between pageable host memory and the device inside graph capture; stage it through a pinned "
                 "buffer"),
    "isolation": ("CUDA error: operation not permitted: Dependency created on uncaptured work in another stream",
                  CaptureDependencyError,
                  "a capturing stream waited on work recorded outside the capture; synchronize it before the capture"),
    "global-mode": ("CUDA error: operation not permitted when stream is capturing", CaptureInvalidatedError,
                    "CUDA refused it while a capture is open (global capture mode), and the capture is invalidated"),
}


@pytest.mark.parametrize("name", list(CUDA_TEXT))
def test_a_raw_cuda_refusal_becomes_the_seam_error_naming_the_call_the_fix_and_cudas_first_line(name: str) -> None:
    text, cls, advice = CUDA_TEXT[name]
    err = RuntimeError(text + "\nCUDA kernel errors might be asynchronously reported at some other API call")
    seam_error = translate_cuda_error(err, "aten.mm.default")
    assert type(seam_error) is cls
    assert str(seam_error) == f"aten.mm.default: {advice} (CUDA: {text})"


def test_only_the_first_160_characters_of_cudas_first_line_are_quoted() -> None:
    first = "operation not permitted when stream is capturing " + "x" * 200
    seam_error = translate_cuda_error(RuntimeError(first + "\nsecond line"), "aten.add.Tensor")
    assert str(seam_error).endswith(f"(CUDA: {first[:160]})")


def test_a_runtime_error_that_is_no_capture_refusal_is_not_translated() -> None:
    assert translate_cuda_error(RuntimeError("shape mismatch: [2] vs [3]"), "aten.add.Tensor") is None


def open_capture_then(b: Backend, during: Callable[[], object]) -> None:
    with GraphCaptureScope(b, b.default_queue(), BreakableGraph(b, CaptureMode.FULL)):
        during()


def test_a_global_mode_refusal_invalidates_every_open_capture_naming_the_call() -> None:
    b = EmulatedBackend()
    with pytest.raises(CaptureInvalidatedError, match=r"^the cpu-emulated capture on queue \d+ was invalidated by "
                                                      r"aten\.mm\.default while it was open"):
        open_capture_then(b, lambda: translate_cuda_error(
            RuntimeError("operation not permitted when stream is capturing"), "aten.mm.default"))
    assert not b.capturing


def test_the_other_refusals_leave_the_open_capture_valid() -> None:
    b = EmulatedBackend()
    for text, _, _ in (CUDA_TEXT["cublas"], CUDA_TEXT["pageable"], CUDA_TEXT["isolation"]):
        open_capture_then(b, lambda: translate_cuda_error(RuntimeError(text), "aten.mm.default"))
    assert not b.capturing


# ---- the guard CudaBackend pushes, over CPU tensors it is told are device memory -------------
@torch.library.custom_op("seamgate_test::fails_with", mutates_args=())
def fails_with(x: torch.Tensor, text: str) -> torch.Tensor:
    raise RuntimeError(text)


@fails_with.register_fake
def _(x: torch.Tensor, text: str) -> torch.Tensor:
    return torch.empty_like(x)


def device_guard(capturing_here: bool) -> CaptureGuard:
    return CaptureGuard(lambda t: "device", lambda: capturing_here)


def test_the_cuda_guard_refuses_a_host_read_on_the_capturing_queue_and_passes_ordinary_work_with_its_keywords() -> None:
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([10.0, 20.0])
    with device_guard(capturing_here=True):
        total = torch.add(x, y, alpha=2)
        with pytest.raises(CaptureSyncError, match=r"^aten\._local_scalar_dense\.default while a graph capture"):
            x[0].item()
    assert total.tolist() == [21.0, 42.0]


def test_the_cuda_guard_lets_a_host_read_through_where_no_capture_is_open() -> None:
    with device_guard(capturing_here=False):
        assert torch.tensor([3.0]).item() == 3.0


def test_the_cuda_guard_says_a_raw_cuda_refusal_as_the_seam_error_and_keeps_the_raw_one_as_its_cause() -> None:
    x = torch.tensor([1.0])
    with device_guard(capturing_here=True):
        with pytest.raises(CaptureWarmupError, match=r"^seamgate_test\.fails_with\.default: the first cuBLAS use") \
                as refused:
            torch.ops.seamgate_test.fails_with(x, "CUBLAS_STATUS_NOT_INITIALIZED")
    assert isinstance(refused.value.__cause__, RuntimeError)
    assert "CUBLAS_STATUS_NOT_INITIALIZED" in str(refused.value.__cause__)


def test_the_cuda_guard_lets_any_other_runtime_error_out_unchanged() -> None:
    x = torch.tensor([1.0])
    with device_guard(capturing_here=True):
        with pytest.raises(RuntimeError, match="^shape mismatch$") as raised:
            torch.ops.seamgate_test.fails_with(x, "shape mismatch")
    assert type(raised.value) is RuntimeError


def test_in_place_work_and_views_on_a_queue_outside_the_capture_run_now_only_allocation_is_refused() -> None:
    b = EmulatedBackend()
    side = b.new_queue()
    d = b.to_device(torch.tensor([1.0, 2.0, 3.0]))
    g = BreakableGraph(b, CaptureMode.FULL)
    with GraphCaptureScope(b, b.default_queue(), g):
        with b.use_queue(side):  # not part of the capture: allocates nothing, so CUDA runs it eagerly
            d.add_(1)
            tail = d[1:]
            tail.mul_(10)
        y = d * 1  # captured on the capturing queue
    assert d.tolist() == [2.0, 30.0, 40.0] and tail.tolist() == [30.0, 40.0]  # ran now, and not rolled back
    g.replay()
    assert y.tolist() == [2.0, 30.0, 40.0]
