"""The CUDA backend says CUDA's own capture refusals in the seam's words, word for word.

What the seam cannot see coming, a raw torch stream forked into the capture or a raw CUDA call that
the global capture mode refuses, CUDA refuses at the capture's end; the backend turns it into the
seam's error, with the reason and the fix, instead of CUDA's bare text. And it refuses by name what
it cannot do: run without a GPU, or replay a segment another backend captured. A CUDA error of
another kind at the capture's end reaches the caller as CUDA said it, never as an invalidated capture.
"""

from __future__ import annotations

import pytest
import torch

from seam import (CaptureInvalidatedError, CaptureStateError, CaptureUnsupportedError, CudaBackend, EmulatedBackend,
                  UnjoinedForkError)


def test_without_a_gpu_the_cuda_backend_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(CaptureUnsupportedError) as refused:
        CudaBackend()
    assert str(refused.value) == "CudaBackend needs a CUDA device (torch.cuda.is_available() is False)"


@pytest.mark.arm("cuda")
def test_a_raw_stream_forked_into_the_capture_and_never_joined_is_said_as_an_unjoined_fork() -> None:
    b = CudaBackend()
    q, x = b.default_queue(), b.alloc((4,))
    side = torch.cuda.Stream(device=b.device)
    b.begin_capture(q)
    side.wait_stream(q.native)  # a fork the seam is never told of
    with torch.cuda.stream(side):
        x.add_(1)
    with pytest.raises(UnjoinedForkError) as refused:
        b.end_capture(q)
    assert str(refused.value) == ("a side stream forked into the capture was not joined before end_capture "
                                  "(cudaErrorStreamCaptureUnjoined); note_fork it so the scope joins it")


@pytest.mark.arm("cuda")
def test_a_raw_call_the_capture_mode_refuses_is_said_as_an_invalidated_capture() -> None:
    b = CudaBackend()
    q, x = b.default_queue(), b.alloc((4,))
    other = torch.cuda.Stream(device=b.device)
    event = torch.cuda.Event()
    event.record(other)
    b.begin_capture(q)
    with torch.cuda.stream(q.native):
        x.add_(1)
        with pytest.raises(RuntimeError):
            event.query()  # raw: the seam never sees it; CUDA refuses it and invalidates the capture
    with pytest.raises(CaptureInvalidatedError) as refused:
        b.end_capture(q)
    assert str(refused.value) == ("CUDA invalidated the capture (cudaErrorStreamCaptureInvalidated): a call CUDA's "
                                  "global capture mode refuses ran while it was open; the CUDA warning printed "
                                  "before names it")


@pytest.mark.arm("cuda")
def test_a_segment_another_backend_captured_is_refused_by_its_id() -> None:
    emu = EmulatedBackend()
    eq, y = emu.default_queue(), emu.alloc((2,))
    emu.begin_capture(eq)
    y.add_(1)
    segment = emu.end_capture(eq)
    b = CudaBackend()
    with pytest.raises(CaptureStateError) as refused:
        b.replay(segment, b.default_queue())
    assert str(refused.value) == f"graph {segment.id} was not captured by a CudaBackend"


@pytest.mark.arm("cuda")
def test_a_cuda_error_of_another_kind_at_the_capture_end_reaches_the_caller_as_cuda_said_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    b = CudaBackend()
    q, x = b.default_queue(), b.alloc((4,))
    real_end = torch.cuda.CUDAGraph.capture_end

    def end_then_fail(self: torch.cuda.CUDAGraph) -> None:
        real_end(self)  # the capture really ends; then the graph's instantiation finds no memory
        raise RuntimeError("CUDA error: out of memory")

    monkeypatch.setattr(torch.cuda.CUDAGraph, "capture_end", end_then_fail)
    b.begin_capture(q)
    with b.use_queue(q):
        x.add_(1)
    with pytest.raises(RuntimeError) as failed:
        b.end_capture(q)
    assert type(failed.value) is RuntimeError, f"said as {type(failed.value).__name__}: {failed.value}"
    assert str(failed.value) == "CUDA error: out of memory"
    assert not b.capturing
