"""What the capture guard lets through, and what a refusal the body caught still costs the capture.

CUDA's global capture mode invalidates the open capture at the refused call itself, so a body that
catches the seam's refusal and carries on still ends in ``CaptureInvalidatedError`` naming that call.
Work of a fixed shape is NOT a host sync and passes: a boolean mask used by ``masked_fill``, an
integer index, bool values written at integer positions; a factory with ``device=`` inside a capture
makes device memory of the graph (poisoned until a replay), one without it makes host memory now.
"""

from __future__ import annotations

from typing import Callable

import pytest
import torch

from seam import (
    BreakableGraph,
    CaptureError,
    CaptureInvalidatedError,
    CaptureMode,
    CaptureStateError,
    CaptureSyncError,
    EmulatedBackend,
    GraphCaptureScope,
)
from seam.capture_guard import CaptureGuard

from .conftest import skip_a_second_emulator


def swallow(work: Callable[[], object]) -> None:
    try:
        work()
    except CaptureError:
        pass  # the body carries on as if nothing happened


def outside(b: EmulatedBackend, d: torch.Tensor) -> Callable[[], object]:
    def work() -> object:
        with b.use_queue(b.new_queue()):
            return d * 2
    return work


CAUGHT: dict[str, tuple[Callable[[EmulatedBackend, torch.Tensor], Callable[[], object]], str]] = {
    "item": (lambda b, d: lambda: d[0].item(), "aten._local_scalar_dense.default (a host read of device memory)"),
    "tolist": (lambda b, d: lambda: d.tolist(), "Tensor.tolist() (a host read of device memory)"),
    "allocation-off-the-capture": (outside, "aten.mul.Tensor (device memory allocated outside the capture)"),
}


@pytest.mark.parametrize("name", list(CAUGHT))
def test_a_refusal_the_body_caught_still_invalidates_the_capture_naming_the_call(name: str) -> None:
    if name == "tolist":
        skip_a_second_emulator("Tensor.tolist() caught in the body")
    make, call = CAUGHT[name]
    b = EmulatedBackend()
    d = b.to_device(torch.tensor([1.0, 2.0]))
    with pytest.raises(CaptureInvalidatedError) as refused:
        with GraphCaptureScope(b, b.default_queue(), BreakableGraph(b, CaptureMode.FULL)):
            swallow(make(b, d))
    assert f"was invalidated by {call} while it was open" in str(refused.value)
    assert not b.capturing


def test_fixed_shape_mask_and_index_work_inside_a_capture_passes_and_replays() -> None:
    b = EmulatedBackend()
    x = b.to_device(torch.tensor([1.0, -2.0, 3.0, -4.0]))
    idx = b.to_device(torch.tensor([0, 2]))
    flags = b.alloc((4,), torch.bool)
    truth = b.to_device(torch.tensor([True, True]))
    g = BreakableGraph(b, CaptureMode.FULL)
    with GraphCaptureScope(b, b.default_queue(), g):
        clipped = x.masked_fill(x < 0, 0.0)  # a bool mask as the SECOND argument, fixed shape
        picked = x[idx]  # an integer index: fixed shape
        flags.index_put_((idx,), truth)  # bool values written at integer positions
    g.replay()
    assert clipped.tolist() == [1.0, 0.0, 3.0, 0.0] and picked.tolist() == [1.0, 3.0]
    assert flags.tolist() == [True, False, True, False]


def test_a_factory_with_device_inside_a_capture_makes_graph_memory_one_without_makes_host_memory_now() -> None:
    b = EmulatedBackend()
    g = BreakableGraph(b, CaptureMode.FULL)
    with GraphCaptureScope(b, b.default_queue(), g):
        on_device = torch.full((2,), 7.0, device=b.device)
        on_host = torch.full((2,), 7, dtype=torch.int32)
    assert torch.isnan(on_device).all()  # born in the capture: garbage until a replay
    assert on_host.dtype == torch.int32 and on_host.tolist() == [7, 7]  # made now, with its keywords
    g.replay()
    assert on_device.tolist() == [7.0, 7.0]


def test_the_cuda_guard_on_a_queue_outside_an_open_capture_refuses_allocation_from_device_memory() -> None:
    b = EmulatedBackend()
    x = torch.tensor([1.0, 2.0])
    with pytest.raises(CaptureInvalidatedError), \
            GraphCaptureScope(b, b.default_queue(), BreakableGraph(b, CaptureMode.FULL)):  # the refusals cost it
        with b.use_queue(b.new_queue()), CaptureGuard(lambda t: "device", lambda: False):
            with pytest.raises(CaptureStateError, match=r"^aten\.mul\.Tensor on a queue outside the open graph capture "
                                                        r"allocates device memory"):
                x * 2
            x.add_(1)  # in place: allocates nothing, runs
            assert x.tolist() == [2.0, 3.0]
            with pytest.raises(CaptureSyncError, match=r"^aten\._local_scalar_dense\.default while a graph capture"):
                x[0].item()
