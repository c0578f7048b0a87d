"""Inside a capture, what CUDA refuses is refused with torch's exception class and CUDA's words
(the H200's, ``evidence/fidelity-h200.json``'s raw programs), and a refusal that invalidates the
capture on a GPU makes its ``capture_end`` fail the same way here."""

from __future__ import annotations

from typing import Callable

import pytest
import torch

NOT_PERMITTED = "operation not permitted when stream is capturing"
PAGEABLE = "Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned"
INVALIDATED = "operation failed due to a previous error during capture"

#: name -> (body(x, host, other), the body's error class name, its words, whether capture_end then fails)
CASES: dict[str, tuple[Callable[..., object], str, str, bool]] = {
    "item": (lambda x, h, o: x.sum().item(), "AcceleratorError", NOT_PERMITTED, True),
    "truth_value_of_a_tensor": (lambda x, h, o: bool(x.sum() > 0), "AcceleratorError", NOT_PERMITTED, True),
    "tensor_or_tensor": (lambda x, h, o: x[:1] or x[1:2], "AcceleratorError", NOT_PERMITTED, True),
    "nonzero": (lambda x, h, o: torch.nonzero(x), "AcceleratorError", NOT_PERMITTED, True),
    "boolean_mask": (lambda x, h, o: x[x > 0], "AcceleratorError", NOT_PERMITTED, True),
    "synchronize": (lambda x, h, o: torch.cuda.synchronize(), "AcceleratorError", NOT_PERMITTED, True),
    "other_stream_synchronize": (lambda x, h, o: o.synchronize(), "AcceleratorError", NOT_PERMITTED, True),
    "cpu": (lambda x, h, o: x.cpu(), "RuntimeError", PAGEABLE, False),
    "tolist": (lambda x, h, o: x.tolist(), "RuntimeError", PAGEABLE, False),
    "tensor_from_data": (lambda x, h, o: torch.tensor([1.0], device="cuda"), "RuntimeError", PAGEABLE, False),
    "pageable_copy": (lambda x, h, o: x.copy_(h, non_blocking=True), "RuntimeError", PAGEABLE, False),
}


def _capture(body: Callable[..., object]) -> tuple[BaseException | None, BaseException | None]:
    x = torch.ones(4, device="cuda")
    host = torch.ones(4)
    s, other = torch.cuda.Stream(), torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    body_error = end_error = None
    with torch.cuda.stream(s):
        g.capture_begin()
        try:
            body(x, host, other)
        except Exception as err:  # noqa: BLE001 - the case reads what the body raised
            body_error = err
        try:
            g.capture_end()
        except Exception as err:  # noqa: BLE001
            end_error = err
    return body_error, end_error


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_refused_call_raises_torchs_class_and_cudas_words(emulated: None, name: str) -> None:
    body, cls, words, invalidates = CASES[name]
    body_error, end_error = _capture(body)
    assert body_error is not None, f"{name}: the body was not refused"
    assert type(body_error).__name__ == cls
    assert isinstance(body_error, RuntimeError)
    assert words in str(body_error).splitlines()[0]
    if invalidates:
        assert end_error is not None and INVALIDATED in str(end_error).splitlines()[0]
    else:
        assert end_error is None


def test_an_unsafe_call_the_body_swallows_still_fails_the_capture_and_the_work_after_it(emulated: None) -> None:
    def swallow(x: torch.Tensor, h: torch.Tensor, o: torch.cuda.Stream) -> None:
        try:
            x.sum().item()
        except RuntimeError:
            pass
        x.add_(1)  # H200: work after the swallowed refusal fails at once

    body_error, end_error = _capture(swallow)
    assert body_error is not None and INVALIDATED in str(body_error).splitlines()[0]
    assert end_error is not None and INVALIDATED in str(end_error)


def test_the_first_matmul_of_a_thread_inside_a_capture_is_cublas_not_initialized(emulated: None) -> None:
    a = torch.ones(2, 2, device="cuda")
    body_error, end_error = _capture(lambda x, h, o: a @ a)
    assert isinstance(body_error, RuntimeError) and "CUBLAS_STATUS_NOT_INITIALIZED" in str(body_error)
    a @ a  # the handle now exists: the same capture works
    body_error, end_error = _capture(lambda x, h, o: a @ a)
    assert body_error is None and end_error is None


def test_a_capture_on_the_default_stream_is_refused(emulated: None) -> None:
    with pytest.raises(RuntimeError, match="CUDA graphs must be captured on a non-default stream"):
        torch.cuda.CUDAGraph().capture_begin()


def test_a_graph_captures_once(emulated: None) -> None:
    x = torch.ones(2, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        x.add_(1)
    with pytest.raises(RuntimeError, match="This CUDAGraph instance already owns a captured graph"):
        with torch.cuda.graph(g):
            x.add_(1)


def test_releasing_another_graph_inside_a_capture_invalidates_it(emulated: None) -> None:
    x = torch.ones(2, device="cuda")
    other = torch.cuda.CUDAGraph()
    with torch.cuda.graph(other):
        x.add_(1)
    g = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match=INVALIDATED):
        with torch.cuda.graph(g):
            x.add_(1)
            del other


def test_relaxed_mode_lets_another_stream_read_the_host(emulated: None) -> None:
    w = torch.ones(2, device="cuda")
    side = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    x = torch.ones(2, device="cuda")
    with torch.cuda.graph(g, capture_error_mode="relaxed"):
        x.add_(1)
        with torch.cuda.stream(side):
            assert w.sum().item() == 2.0
    g.replay()
    assert x.tolist() == [2.0, 2.0]  # the capture ran nothing; one replay added one
