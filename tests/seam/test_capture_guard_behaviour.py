"""What the capture guard refuses inside a capture, op by op and copy direction by copy direction.

Rows name the work a model might do inside a captured region; each says which ``CaptureError`` a
user gets (the same on the emulator and on CUDA, DESIGN §4), or that it is allowed. The same work
outside any capture is always allowed.
"""

from __future__ import annotations

from typing import Callable

import pytest
import torch

from seam import (
    Backend,
    BreakableGraph,
    CaptureError,
    CaptureMode,
    CaptureSyncError,
    GraphCaptureScope,
    PageableCopyError,
)

Work = Callable[[Backend, torch.Tensor], object]

#: Host reads of device values, and ops whose output shape needs one: refused in capture.
SYNCS: dict[str, Work] = {
    "item": lambda b, d: d[0].item(),
    "bool": lambda b, d: bool(d[0]),
    "if-tensor": lambda b, d: 1 if d[0] else 0,
    "equal": lambda b, d: torch.equal(d, d),
    "nonzero": lambda b, d: torch.nonzero(d),
    "masked_select": lambda b, d: torch.masked_select(d, d > 0),
    "unique": lambda b, d: torch.unique(d),
    "unique-dim": lambda b, d: torch.unique(d.reshape(2, 2), dim=0),
    "unique_consecutive": lambda b, d: torch.unique_consecutive(d),
    "repeat_interleave-tensor": lambda b, d: torch.repeat_interleave(d.long()),
}

#: DESIGN §4 lists these as refused on both arms; the emulator lets them through (a product bug,
#: reported to the lead, deliberately left RED here: the emulator passes what the H200 refuses).
NOT_YET_REFUSED: dict[str, Work] = {
    "tolist": lambda b, d: d.tolist(),
    "cpu": lambda b, d: d.cpu(),
    "boolean-mask-index": lambda b, d: d[d > 0],
}


def device(backend: Backend) -> torch.Tensor:
    return backend.to_device(torch.tensor([1.0, 2.0, 2.0, 3.0]))


def in_capture(backend: Backend, work: Callable[[], object]) -> None:
    g = BreakableGraph(backend, CaptureMode.FULL)
    with GraphCaptureScope(backend, backend.default_queue(), g):
        work()


@pytest.mark.parametrize("name", list(SYNCS))
def test_a_host_read_of_a_device_value_inside_capture_is_a_capture_sync_error(backend: Backend, name: str) -> None:
    d = device(backend)
    with pytest.raises(CaptureSyncError):
        in_capture(backend, lambda: SYNCS[name](backend, d))
    assert not backend.capturing


@pytest.mark.parametrize("name", list(SYNCS))
def test_the_same_read_outside_capture_is_allowed(backend: Backend, name: str) -> None:
    d = device(backend)
    SYNCS[name](backend, d)  # no error
    in_capture(backend, lambda: d * 2)
    SYNCS[name](backend, d)  # and again after a capture closed


@pytest.mark.parametrize("name", list(NOT_YET_REFUSED))
def test_design_s4_tolist_cpu_and_boolean_mask_indexing_inside_capture_are_refused(backend: Backend, name: str) -> None:
    d = device(backend)
    with pytest.raises(CaptureError):
        in_capture(backend, lambda: NOT_YET_REFUSED[name](backend, d))


def test_synchronize_inside_capture_is_refused_and_allowed_outside(backend: Backend) -> None:
    with pytest.raises(CaptureError):
        in_capture(backend, backend.synchronize)
    backend.synchronize()
    assert not backend.capturing


# ---- copies, both directions -------------------------------------------------------------
def pageable(backend: Backend) -> torch.Tensor:
    return torch.tensor([5.0, 6.0, 7.0, 8.0])


def pinned(backend: Backend) -> torch.Tensor:
    t = backend.alloc_pinned((4,))
    backend.host_write(t, torch.tensor([5.0, 6.0, 7.0, 8.0]))
    return t


COPIES: dict[str, tuple[Callable[[Backend], torch.Tensor], Callable[[Backend], torch.Tensor], type[Exception] | None]] = {
    # name: (make dst, make src, error inside capture)
    "pageable-to-device": (device, pageable, PageableCopyError),
    "device-to-pageable": (pageable, device, CaptureSyncError),
    "pinned-to-device": (device, pinned, None),
    "device-to-pinned": (pinned, device, None),
    "device-to-device": (device, device, None),
}


@pytest.mark.parametrize("via", ["tensor.copy_", "backend.copy"])
@pytest.mark.parametrize("name", list(COPIES))
def test_a_copy_inside_capture_is_refused_only_where_cuda_refuses_it(backend: Backend, name: str, via: str) -> None:
    make_dst, make_src, error = COPIES[name]
    dst, src = make_dst(backend), make_src(backend)

    def work() -> None:
        if via == "tensor.copy_":
            dst.copy_(src)
        else:
            backend.copy(dst, src, backend.current_queue())

    if via == "tensor.copy_" and name in ("pinned-to-device", "device-to-pinned"):
        error = CaptureSyncError  # a BLOCKING copy to or from host memory waits on the host (H200 refuses it)
    if error is None:
        in_capture(backend, work)
    else:
        with pytest.raises(error):
            in_capture(backend, work)
        assert not backend.capturing


@pytest.mark.parametrize("name", list(COPIES))
def test_every_copy_is_allowed_outside_capture(backend: Backend, name: str) -> None:
    make_dst, make_src, _ = COPIES[name]
    dst, src = make_dst(backend), make_src(backend)
    backend.copy(dst, src, backend.default_queue())
    backend.synchronize()
    assert dst.cpu().tolist() == src.cpu().tolist()


def test_a_pageable_copy_error_says_to_stage_through_pinned_memory(backend: Backend) -> None:
    d, host = device(backend), pageable(backend)
    with pytest.raises(PageableCopyError, match=r"^copy from pageable host memory to the device inside graph capture; "
                                                r"stage it through a pinned buffer \(backend\.alloc_pinned / "
                                                r"PersistentStepInput\)$"):
        in_capture(backend, lambda: d.copy_(host))


def test_a_device_to_pageable_copy_error_says_it_is_a_host_sync(backend: Backend) -> None:
    d, host = device(backend), pageable(backend)
    with pytest.raises(CaptureSyncError, match="^device-to-pageable-host copy inside graph capture is a host sync$"):
        in_capture(backend, lambda: host.copy_(d))


def test_reading_a_host_tensor_inside_capture_is_host_work_not_a_sync(backend: Backend) -> None:
    host = torch.tensor([4.0, 5.0])  # pageable host memory: no device value is read
    seen = []
    in_capture(backend, lambda: seen.append((host[0].item(), bool(host[1]), torch.nonzero(host).numel())))
    assert seen == [(4.0, True, 2)]
