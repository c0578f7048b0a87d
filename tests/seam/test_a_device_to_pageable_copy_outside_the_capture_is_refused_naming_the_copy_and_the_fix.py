"""A copy from the device into pageable host memory on a queue outside an open capture is refused, in full.

The copy waits for its queue on the host, as ``item()`` does, which CUDA's global capture mode
refuses while any capture is open. The user reads the refusal (what the copy is, why it waits, what
to do instead) and, when the body swallows it, the close's ``CaptureInvalidatedError``, which must
name that copy: without the name, the invalidation of a capture that looked fine cannot be traced.
"""

from __future__ import annotations

import pytest
import torch

from seam import BreakableGraph, CaptureInvalidatedError, CaptureMode, CaptureSyncError, EmulatedBackend, GraphCaptureScope


def test_the_refusal_says_why_the_copy_waits_and_when_to_copy_and_the_close_names_the_copy() -> None:
    b = EmulatedBackend()
    d = b.to_device(torch.tensor([1.0, 2.0]))
    host = torch.zeros(2)
    side = b.new_queue()
    refused = []
    with pytest.raises(CaptureInvalidatedError) as closed:
        with torch.no_grad(), GraphCaptureScope(b, b.default_queue(), BreakableGraph(b, CaptureMode.FULL)):
            d.mul_(2)
            with b.use_queue(side):
                try:
                    host.copy_(d)
                except CaptureSyncError as err:
                    refused.append(str(err))
    assert refused == ["aten.copy_.default from the device into pageable host memory while a graph capture is open "
                       "waits on the host (global capture mode); copy after the capture closes"]
    assert "aten.copy_.default (a device-to-pageable copy: a host sync)" in str(closed.value)
