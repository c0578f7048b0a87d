"""Streams order captures as CUDA orders them: a stream that waits on the capturing stream joins the
capture; its work must be joined back before ``capture_end`` (directly or through other streams),
a fork that issued no work needs no join, and a capturing stream may not wait on uncaptured work."""

from __future__ import annotations

import pytest
import torch


def _capture(body) -> tuple[torch.cuda.CUDAGraph, torch.Tensor]:  # type: ignore[no-untyped-def]
    x = torch.ones(4, device="cuda")
    s = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        g.capture_begin()
        try:
            body(x, s)
        finally:
            g.capture_end()
    return g, x


def test_work_on_an_unjoined_fork_fails_the_capture_end(emulated: None) -> None:
    side = torch.cuda.Stream()

    def body(x: torch.Tensor, s: torch.cuda.Stream) -> None:
        side.wait_stream(s)
        with torch.cuda.stream(side):
            x.add_(1)

    with pytest.raises(torch.AcceleratorError if hasattr(torch, "AcceleratorError") else RuntimeError,
                       match="capturing stream has unjoined work"):
        _capture(body)


#: What torch 2.11 on the H200 says, whole (``evidence/h200-subjects-cuda.json``): CUDA's line and torch's
#: tail, nothing else. Libraries translate it by matching its words, so an extra word here can make a
#: library's wrong match pass on the emulator alone.
H200_UNJOINED = (
    "CUDA error: capturing stream has unjoined work\n"
    "Search for `cudaErrorStreamCaptureUnjoined' in "
    "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
    "might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)


def test_the_unjoined_refusal_says_exactly_what_the_h200_says(emulated: None) -> None:
    side = torch.cuda.Stream()

    def body(x: torch.Tensor, s: torch.cuda.Stream) -> None:
        side.wait_stream(s)
        with torch.cuda.stream(side):
            x.add_(1)

    with pytest.raises(RuntimeError) as caught:
        _capture(body)
    assert type(caught.value).__name__ == ("AcceleratorError" if hasattr(torch, "AcceleratorError")
                                           else "RuntimeError")
    assert str(caught.value) == H200_UNJOINED


def test_a_joined_fork_is_captured_and_replayed(emulated: None) -> None:
    side = torch.cuda.Stream()

    def body(x: torch.Tensor, s: torch.cuda.Stream) -> None:
        side.wait_stream(s)
        with torch.cuda.stream(side):
            x.mul_(3)
        s.wait_stream(side)

    g, x = _capture(body)
    assert x.tolist() == [1.0] * 4  # nothing ran at capture
    g.replay()
    assert x.tolist() == [3.0] * 4


def test_a_join_through_a_chain_of_streams_counts(emulated: None) -> None:
    a, b = torch.cuda.Stream(), torch.cuda.Stream()

    def body(x: torch.Tensor, s: torch.cuda.Stream) -> None:
        a.wait_stream(s)
        b.wait_stream(a)
        with torch.cuda.stream(b):
            x.add_(1)
        a.wait_stream(b)
        s.wait_stream(a)

    g, x = _capture(body)
    g.replay()
    assert x.tolist() == [2.0] * 4


def test_a_fork_that_issued_no_work_needs_no_join(emulated: None) -> None:
    a = torch.cuda.Stream()

    def body(x: torch.Tensor, s: torch.cuda.Stream) -> None:
        a.wait_stream(s)
        x.add_(1)

    g, x = _capture(body)
    g.replay()
    assert x.tolist() == [2.0] * 4


def test_waiting_on_an_event_recorded_before_the_capture_is_refused(emulated: None) -> None:
    other = torch.cuda.Stream()
    ev = torch.cuda.Event()
    ev.record(other)

    s = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        g.capture_begin()
        with pytest.raises(RuntimeError, match="dependency created on uncaptured work in another stream"):
            s.wait_event(ev)
        with pytest.raises(RuntimeError, match="operation failed due to a previous error during capture"):
            g.capture_end()


def test_work_on_a_stream_outside_the_capture_runs_now_and_is_not_replayed(emulated: None) -> None:
    other = torch.cuda.Stream()
    w = torch.ones(2, device="cuda")

    def body(x: torch.Tensor, s: torch.cuda.Stream) -> None:
        x.add_(1)
        with torch.cuda.stream(other):
            w.add_(1)

    g, x = _capture(body)
    g.replay()
    g.replay()
    assert w.tolist() == [2.0, 2.0]
    assert x.tolist() == [3.0] * 4


def test_the_gpu_trace_callbacks_fire_for_event_record_and_wait(emulated: None) -> None:
    from torch.cuda import _gpu_trace

    seen: list[tuple[str, int, int]] = []
    record = lambda e, s: seen.append(("record", e, s))  # noqa: E731
    wait = lambda e, s: seen.append(("wait", e, s))  # noqa: E731
    _gpu_trace.register_callback_for_event_record(record)
    _gpu_trace.register_callback_for_event_wait(wait)
    try:
        torch._C._activate_gpu_trace()
        a, b = torch.cuda.Stream(), torch.cuda.Stream()
        ev = torch.cuda.Event()
        ev.record(a)
        b.wait_event(ev)
    finally:
        _gpu_trace.EventRecordCallbacks.callback_list.remove(record)
        _gpu_trace.EventWaitCallbacks.callback_list.remove(wait)
    assert [k for k, _, _ in seen] == ["record", "wait"]
    assert seen[0][1] == seen[1][1] == ev.cuda_event
    assert (seen[0][2], seen[1][2]) == (a.cuda_stream, b.cuda_stream)
