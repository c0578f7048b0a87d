"""``EagerBackend``, the control lane of lane-identity checks: what a driver on it gets.

Its buffers are zero-filled with the shape and dtype asked for (pinned staging ones too), and every
call that would capture or replay is refused with an error that says to take the eager lane; an
abort has nothing to undo. (A scope on it goes inert: tests/seam/test_inert.py.)
"""

from __future__ import annotations

import pytest
import torch

from seam import CaptureUnsupportedError, EagerBackend


@pytest.mark.parametrize("alloc", ["alloc", "alloc_pinned"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16])
def test_a_buffer_is_zero_filled_with_the_shape_and_dtype_asked_for(alloc: str, dtype: torch.dtype) -> None:
    buffer = getattr(EagerBackend(), alloc)((2, 3), dtype)
    assert buffer.shape == (2, 3) and buffer.dtype == dtype and buffer.device.type == "cpu"
    assert torch.equal(buffer, torch.zeros((2, 3), dtype=dtype))


def test_the_backend_says_it_cannot_capture_and_names_itself() -> None:
    backend = EagerBackend()
    assert backend.can_capture is False and backend.name == "eager"


def test_beginning_a_capture_is_refused_with_the_way_out() -> None:
    backend = EagerBackend()
    with pytest.raises(CaptureUnsupportedError, match=r"^EagerBackend cannot capture: take the eager lane \(can_capture is False\)$"):
        backend.begin_capture(backend.default_queue())
    assert not backend.capturing
    backend.abort_capture(backend.default_queue())  # nothing to undo, and no error
