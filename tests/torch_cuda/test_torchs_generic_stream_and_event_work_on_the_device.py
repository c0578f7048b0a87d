"""``torch.Stream`` and ``torch.Event``, torch's device-generic classes (what ``torch.accelerator`` code and
newer engines write), make streams and events of the device, and a ``torch.cuda`` stream or event is one of
them, as on a CUDA build."""

from __future__ import annotations

import pytest
import torch


@pytest.mark.parametrize("device", ["cuda", "cuda:0", torch.device("cuda", 0)], ids=["str", "str-index", "device"])
def test_a_stream_made_for_cuda_is_a_torch_stream_on_cuda_0(torch_cuda: str, device: object) -> None:
    s = torch.Stream(device=device)
    assert isinstance(s, torch.Stream)
    assert s.device == torch.device("cuda", 0) and s.device_index == 0
    assert s != torch.cuda.current_stream()  # a new stream, not the current one


def test_the_cuda_classes_streams_and_events_are_torchs_generic_ones_too(torch_cuda: str) -> None:
    assert isinstance(torch.cuda.current_stream(), torch.Stream)
    assert isinstance(torch.cuda.Stream(), torch.Stream)
    assert isinstance(torch.cuda.Event(), torch.Event)


def test_a_generic_stream_and_event_order_work_and_answer_the_host(torch_cuda: str) -> None:
    s = torch.Stream(device="cuda")
    x = torch.ones(4, device="cuda")
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = x * 2
    done = s.record_event()
    assert isinstance(done, torch.Event)
    torch.cuda.current_stream().wait_event(done)
    done.synchronize()
    assert done.query() and s.query()
    assert y.tolist() == [2.0, 2.0, 2.0, 2.0]


def test_a_generic_event_records_on_the_current_stream_and_times(torch_cuda: str) -> None:
    start, end = torch.Event(device="cuda", enable_timing=True), torch.Event(device="cuda", enable_timing=True)
    assert isinstance(start, torch.Event)
    start.record()
    torch.ones(8, device="cuda").sum()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0


def test_a_host_stream_is_still_torchs_own(torch_cuda: str) -> None:
    s = torch.Stream(device="cpu")
    assert isinstance(s, torch.Stream) and s.device == torch.device("cpu")
