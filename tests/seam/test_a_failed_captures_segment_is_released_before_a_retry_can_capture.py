"""The segment of a capture that ended invalidated is released through the collector guard at once.

A driver that retries a failed capture keeps the failed one's ``CaptureInvalidatedError`` (and with
its traceback, the dead segment) alive into the retry. If that segment still held its native graph,
dropping the error inside the retry's capture would free a CUDA graph while a capture is open:
CUDA then fails the retry ("operation not permitted when stream is capturing", seen on the H200).
So ``end_capture`` hands the dead segment's native release to the guard before it raises (it runs
when the last open capture closes), and the emulator frees a segment that was marked dead but
never released at the moment it is collected, as CUDA would, so the bug shows on the CPU too.
"""

from __future__ import annotations

import gc

import pytest
import torch

from seam import Backend, CaptureInvalidatedError, CaptureSyncError, collector


def test_dropping_a_failed_captures_error_inside_the_retry_leaves_the_retry_valid(backend: Backend) -> None:
    q = backend.default_queue()
    x = backend.alloc((3,))
    backend.begin_capture(q)
    try:
        with backend.use_queue(q):
            with pytest.raises(CaptureSyncError):
                backend.synchronize()  # refused and caught: the capture is invalidated
        with pytest.raises(CaptureInvalidatedError) as failed:
            backend.end_capture(q)
    finally:
        backend.abort_capture(q)
    assert collector.deferred_releases() == 0  # released when the failed capture closed
    backend.begin_capture(q)  # the retry, with the failed capture's error still held
    try:
        with backend.use_queue(q), torch.no_grad():
            x.add_(1)
        del failed
        gc.collect()  # the error, its traceback and the dead segment go, inside the retry
        graph = backend.end_capture(q)
    finally:
        backend.abort_capture(q)
    with torch.no_grad():
        x.zero_()
    backend.replay(graph, q)
    backend.synchronize()
    assert torch.equal(x.cpu(), torch.ones(3))
    backend.destroy(graph)


def test_a_segment_marked_dead_but_never_released_invalidates_an_open_capture_when_collected(backend: Backend) -> None:
    # What end_capture did before: a segment marked destroyed whose release never reached the guard.
    from seam import RawGraph

    dead = RawGraph()
    dead.destroyed = True
    q = backend.default_queue()
    backend.begin_capture(q)
    try:
        del dead
        gc.collect()  # its native graph goes now, inside the capture, as CUDA frees it
        with pytest.raises(CaptureInvalidatedError,
                           match=r"invalidated by release of graph \d+ \(collected, never released\) while it was open"):
            backend.end_capture(q)
    finally:
        backend.abort_capture(q)
