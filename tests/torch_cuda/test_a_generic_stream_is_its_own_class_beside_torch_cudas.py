"""A generic ``torch.Stream`` or ``torch.Event`` of the device is its own class beside ``torch.cuda``'s, as on a GPU.

From the H100 (torch 2.11, session 23: ``scripts/generic_stream_probe.py``,
``evidence/h100-generic-stream-probe-5c7867f.jsonl``): ``torch.Stream(device="cuda")``,
``torch.accelerator.current_stream()`` and a generic stream's ``record_event()`` give ``torch.Stream`` and
``torch.Event`` objects, never ``torch.cuda``'s; a generic stream never equals a ``torch.cuda`` stream (in either
order) and is not unequal to one of its id either; an object made from a stream's id equals it; a stream's id is not
its handle. Code that compares ``torch.accelerator.current_stream()`` with ``torch.cuda.current_stream()`` sees on the
emulator what it sees on a GPU (the emulator answered True, and gave ``torch.cuda`` objects, before).
"""

from __future__ import annotations

import pytest
import torch


def test_the_generic_classes_make_generic_objects_not_torch_cudas(torch_cuda: str) -> None:
    s = torch.Stream(device="cuda")
    assert type(s) is torch.Stream and not isinstance(s, torch.cuda.Stream)
    assert type(s.record_event()) is torch.Event
    assert type(torch.Event(device="cuda")) is torch.Event and not isinstance(torch.Event(device="cuda"), torch.cuda.Event)
    assert type(torch.cuda.current_stream()).__module__ == "torch.cuda.streams"
    assert isinstance(torch.cuda.current_stream(), torch.Stream)  # the other way round it is one


def test_the_accelerators_stream_is_generic_and_never_equals_the_cuda_one(torch_cuda: str) -> None:
    if not hasattr(torch, "accelerator"):
        pytest.skip("this torch has no torch.accelerator")
    generic, cuda = torch.accelerator.current_stream(), torch.cuda.current_stream()
    assert type(generic) is torch.Stream and generic.stream_id == cuda.stream_id
    assert not generic == cuda and not cuda == generic
    assert not generic != cuda and not cuda != generic  # != compares the ids
    assert len({generic, cuda}) == 2
    assert generic == torch.accelerator.current_stream()


def test_an_object_made_from_a_streams_id_equals_it(torch_cuda: str) -> None:
    side, generic = torch.cuda.Stream(priority=-1), torch.Stream(device="cuda")
    again = torch.cuda.Stream(stream_id=side.stream_id, device_index=0, device_type=1)
    assert again == side and again.cuda_stream == side.cuda_stream and again.priority == side.priority
    assert torch.Stream(stream_id=generic.stream_id, device_index=0, device_type=1) == generic
    assert not torch.Stream(stream_id=side.stream_id, device_index=0, device_type=1) == side
    assert side.stream_id != side.cuda_stream and torch.cuda.default_stream().stream_id == 0


def test_a_generic_stream_has_only_the_generic_api(torch_cuda: str) -> None:
    s = torch.Stream(device="cuda")
    for name in ("cuda_stream", "priority"):
        with pytest.raises(AttributeError, match=f"'torch.Stream' object has no attribute '{name}'"):
            getattr(s, name)
    assert s.native_handle != 0 and s.device == torch.device("cuda", 0) and s.device_type == 1
    with torch.cuda.stream(s):
        current = torch.cuda.current_stream()
    assert type(current) is torch.cuda.Stream and current.cuda_stream == s.native_handle
    assert repr(s) == f"torch.Stream device_type=cuda, device_index=0, stream_id={s.stream_id}"


def test_a_generic_event_names_no_device_until_recorded(torch_cuda: str) -> None:
    e = torch.Event(device="cuda")
    assert repr(e) == "torch.Event device_type=cuda, device_index=-1, event_flag=0, event_id=0"
    e.record()
    assert e.event_id != 0 and "device_index=0" in repr(e)


def test_a_generic_stream_works_wherever_a_cuda_one_does(torch_cuda: str) -> None:
    s, x = torch.Stream(device="cuda"), torch.ones(4, device="cuda")
    s.wait_stream(torch.cuda.current_stream())
    before = torch.cuda.current_stream()
    torch.cuda.set_stream(s)
    try:
        assert torch.cuda.current_stream().stream_id == s.stream_id
        y = x * 2
        y.record_stream(s)
    finally:
        torch.cuda.set_stream(before)
    torch.cuda.current_stream().wait_stream(s)
    graph, capture_on = torch.cuda.CUDAGraph(), torch.Stream(device="cuda")
    with torch.cuda.graph(graph, stream=capture_on):
        z = x * 3
    x.fill_(2.0)
    graph.replay()
    torch.cuda.synchronize()
    assert y.tolist() == [2.0] * 4 and z.tolist() == [6.0] * 4


@pytest.mark.parametrize("kind", ["Stream", "Event", "ExternalStream"])
def test_torch_cudas_classes_name_the_generic_one_among_their_bases(torch_cuda: str, kind: str) -> None:
    """On a GPU ``torch.cuda.Stream`` and ``torch.cuda.Event`` derive from ``torch.Stream`` and ``torch.Event``:
    PyTorch's test_generic_stream_event asks ``torch.Stream in type(s).mro()`` (the emulator said no)."""
    cls = getattr(torch.cuda, kind)
    generic = torch.Event if kind == "Event" else torch.Stream
    order = cls.mro()
    assert order[0] is cls and generic in order and order[-1] is object
    assert issubclass(cls, generic)

    class Mine(cls):  # a user's subclass: its order names it first, then the class and the generic one
        pass

    assert Mine.mro()[:2] == [Mine, cls] and generic in Mine.mro()
