"""``torch.cuda.memory._record_memory_history(context=..., stacks=...)`` keeps the stack frames of allocations and
frees as torch's allocator does, on both arms: the caller's Python frames (and with ``stacks="all"`` C++ frames
naming the operation), none of the emulation's own; which events carry them follows ``context``; what torch does
not know it refuses in its words.

Emulated, every entry's ``frames`` was empty: PyTorch's test_cuda.py ``test_memory_plots``,
``test_memory_plots_free_stack``, ``test_memory_plots_history_context`` and ``test_cycles`` (which names a
tensor cycle's allocation site) passed on the H100 and failed here. ``seam/torch_cuda/memory_frames.py``.
"""

from __future__ import annotations

import gc
import json
import os

import pytest
import torch

# The caching allocator's figures: on the cuda arm in a process of their own (conftest.py).
pytestmark = pytest.mark.own_process

_MACHINERY = os.sep + os.path.join("seam", "torch_cuda") + os.sep


@pytest.fixture
def recording():
    """Start each case with no history, and stop it whatever the case did."""
    torch.cuda.synchronize()
    gc.collect()
    torch.cuda.memory._record_memory_history(enabled=None)
    try:
        yield torch.cuda.memory._record_memory_history
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)


def _names(frames: list[dict]) -> list[str]:
    return [f["name"] for f in frames]


def _entries(action: str) -> list[dict]:
    return [e for e in torch.cuda.memory._snapshot()["device_traces"][0] if e["action"] == action]


def _traced(entry: dict) -> list[dict]:
    """A trace entry's frames: an entry that carries no context has no ``frames`` key (H100, torch 2.11)."""
    return entry.get("frames", [])


def _block_frames(tensor: torch.Tensor) -> list[dict]:
    address = tensor.untyped_storage().data_ptr()
    for segment in torch.cuda.memory._snapshot()["segments"]:
        for block in segment["blocks"]:
            if block["address"] == address and block["state"] == "active_allocated":
                return block["frames"]
    raise AssertionError(f"no live block at {address:#x}")


def _allocate_here() -> torch.Tensor:
    return torch.rand(64, 64, device="cuda")


@pytest.mark.parametrize("context", ["state", "alloc", "all"])
def test_a_live_block_names_where_it_was_allocated(torch_cuda: str, recording, context: str) -> None:
    recording(context=context, stacks="python")
    x = _allocate_here()
    frames = _block_frames(x)
    assert _names(frames)[0] == "_allocate_here", _names(frames)
    assert frames[0]["filename"] == __file__ and frames[0]["line"] > 0
    assert _names(frames)[1] == "test_a_live_block_names_where_it_was_allocated"
    assert not [f for f in frames if _MACHINERY in f["filename"]], "the emulation's own frames are not a GPU's"
    traced = [_names(_traced(e))[:1] for e in _entries("alloc")]
    assert traced == ([[]] if context == "state" else [["_allocate_here"]])
    assert ("frames" in _entries("alloc")[0]) == (context != "state")


def test_without_a_context_nothing_has_frames(torch_cuda: str, recording) -> None:
    recording(context=None)
    x = _allocate_here()
    del x
    snapshot = torch.cuda.memory._snapshot()
    assert [e["action"] for e in snapshot["device_traces"][0] if "frames" in e] == []
    assert "_allocate_here" not in json.dumps(snapshot)


@pytest.mark.parametrize("context", ["state", "alloc", "all"])
def test_a_free_carries_its_own_frames_only_under_context_all(torch_cuda: str, recording, context: str) -> None:
    recording(context=context, stacks="python")
    box = [_allocate_here()]

    def free_here() -> None:
        box.pop()

    free_here()
    frees = _entries("free_requested")
    assert len(frees) == 1 and len(_entries("free_completed")) == 1
    first = _names(_traced(frees[0]))[:1]
    # torch records a free with its own stack under "all", else with its block's allocation's; "state" none
    assert first == {"state": [], "alloc": ["_allocate_here"], "all": ["free_here"]}[context]


def test_cpp_stacks_name_the_operation_that_allocated(torch_cuda: str, recording) -> None:
    recording(context="all", stacks="all")
    x = torch.rand(32, 32, device="cuda")
    names = _names(_block_frames(x))
    assert any("::rand" in name for name in names), names
    assert "test_cpp_stacks_name_the_operation_that_allocated" in names
    recording(context="all", stacks="python")
    y = torch.rand(32, 32, device="cuda")
    assert not any("::" in name for name in _names(_block_frames(y)))


def test_each_allocation_keeps_the_context_in_force_when_it_was_made(torch_cuda: str, recording) -> None:
    def first() -> torch.Tensor:
        return torch.rand(4, 4, device="cuda")

    def unrecorded() -> torch.Tensor:
        return torch.rand(3, 4, device="cuda")

    recording(context="all", stacks="python")
    a = first()
    recording(context=None)
    b = unrecorded()
    recording(context="all", stacks="python")
    text = json.dumps(torch.cuda.memory._snapshot())
    assert "first" in text and "unrecorded" not in text
    assert _names(_block_frames(a))[0] == "first" and _block_frames(b) == []


def test_enabled_state_keeps_one_trace_entry(torch_cuda: str, recording) -> None:
    recording(enabled="state", context="state", stacks="python")
    xs = [_allocate_here() for _ in range(3)]
    trace = torch.cuda.memory._snapshot()["device_traces"][0]
    assert len(trace) == 1
    assert _names(_block_frames(xs[2]))[0] == "_allocate_here"


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"context": "everything"}, "expected context to be 'state', 'alloc', 'all', or None"),
    ({"stacks": "cpp"}, "expected stacks to be 'python', or 'all'"),
    ({"enabled": "yes"}, "expected state to be 'state', 'all', or None"),
])
def test_what_torch_does_not_know_is_refused_in_its_words(torch_cuda: str, recording, kwargs: dict,
                                                           words: str) -> None:
    with pytest.raises(RuntimeError, match=words.replace("(", r"\(")):
        recording(**kwargs)


def test_a_tensor_cycle_is_reported_with_its_allocation_site(torch_cuda: str, recording) -> None:
    from torch.utils.viz._cycles import observe_tensor_cycles

    reports: list[str] = []
    disarm = observe_tensor_cycles(reports.append)
    try:
        def make_cycle() -> None:
            x = torch.empty(3, 4, device="cuda")

            def holder(again: bool) -> torch.Tensor:  # it and its own cell refer to each other: a cycle holding x
                return holder(False) if again else x

        make_cycle()
        gc.collect()
        (lambda: None)()  # the observer runs after the collection, at the next call
    finally:
        disarm()
    assert reports, "the cycle holding a device tensor was not reported"
    assert "make_cycle" in reports[0] and os.path.basename(__file__) in reports[0]


def test_an_allocations_traceback_is_its_recorded_frames(torch_cuda: str, recording) -> None:
    """torch 2.13's ``torch.cuda.memory._allocation_traceback(data_ptr)`` (torch 2.11, the H100's, has none)."""
    if not hasattr(torch.cuda.memory, "_allocation_traceback"):
        pytest.skip("this torch has no torch.cuda.memory._allocation_traceback")
    recording(context=None)
    unrecorded = _allocate_here()
    recording(context="state", stacks="python")
    x = _allocate_here()
    frames = torch.cuda.memory._allocation_traceback(x.untyped_storage().data_ptr())
    assert frames is not None and _names(frames)[0] == "_allocate_here" and frames == _block_frames(x)
    assert torch.cuda.memory._allocation_traceback(unrecorded.untyped_storage().data_ptr()) is None
    assert torch.cuda.memory._allocation_traceback(x.untyped_storage().data_ptr() + 8) is None
