"""A capture invalidated while it was open ends in ``CaptureInvalidatedError``, however its close goes.

The first unsafe call (here a host sync the body refused and caught) invalidates the open capture,
as CUDA's global capture mode does. If closing it then fails for a reason of its own (a side queue
forked into the capture and never joined), the caller still learns the FIRST cause: the error is
``CaptureInvalidatedError`` naming the sync, with the close's own error kept as its cause, and no
capture is left open.
"""

from __future__ import annotations

import pytest
import torch

from seam import Backend, CaptureInvalidatedError, CaptureSyncError, UnjoinedForkError


def test_an_invalidated_capture_whose_unjoined_close_fails_is_reported_invalidated_with_the_close_as_cause(
        backend: Backend) -> None:
    q, side = backend.default_queue(), backend.new_queue()
    x = backend.alloc((4,))
    backend.begin_capture(q)
    try:
        with backend.use_queue(q):
            with pytest.raises(CaptureSyncError):
                backend.synchronize()
            backend.wait_event(side, backend.record_event(q))
        with backend.use_queue(side), torch.no_grad():
            x.add_(1)  # forked work, never joined back
        with pytest.raises(CaptureInvalidatedError, match=r"was invalidated by synchronize\(\) while it was open") as ended:
            backend.end_capture(q)
    finally:
        backend.abort_capture(q)
    assert isinstance(ended.value.__cause__, UnjoinedForkError)
    assert not backend.capturing
