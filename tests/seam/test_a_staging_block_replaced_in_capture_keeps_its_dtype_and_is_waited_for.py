"""A staged step input refreshed inside a capture while its last upload may still read the staging block.

The host may not wait inside a capture, so the cell writes a FRESH staging block (of the cell's
dtype: a float32 block would round a large token id) and keeps the old one, with its upload's event,
until that upload is known done: the first refresh after the capture waits for it (the backend
trace shows the wait for exactly that event) and forgets it.
"""

from __future__ import annotations

import torch

from seam import Backend, BreakableGraph, CaptureMode, GraphCaptureScope, PersistentStepInput

BIG = 2**40 + 1  # an int64 id float32 cannot hold exactly


def waits(backend: Backend) -> list[str]:
    return [e.detail for e in backend.trace if e.op == "event_synchronize"]


def test_a_block_replaced_inside_a_capture_has_the_cells_dtype_and_replays_exact_values(backend: Backend) -> None:
    q = backend.default_queue()
    cell = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64))
    cell.refresh_from_host(q, [1, 2])  # an upload before the capture: the block may still be read
    first_block = cell.staging
    g = BreakableGraph(backend, CaptureMode.FULL)
    with GraphCaptureScope(backend, q, g):
        cell.refresh_from_host(q, [BIG, BIG + 2])
        out = cell.device + 0
    assert cell.staging is not first_block and cell.staging.dtype == torch.int64
    g.replay()
    backend.synchronize()
    assert out.cpu().tolist() == [BIG, BIG + 2]


def test_the_first_refresh_after_the_capture_waits_for_the_retired_blocks_upload_once(backend: Backend) -> None:
    q = backend.default_queue()
    cell = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64))
    backend.trace.clear()
    cell.refresh_from_host(q, [1, 2])
    upload = [e.detail for e in backend.trace if e.op == "record_event"]
    assert len(upload) == 1  # the event after the pre-capture upload
    g = BreakableGraph(backend, CaptureMode.FULL)
    with GraphCaptureScope(backend, q, g):
        cell.refresh_from_host(q, [3, 4])
    assert waits(backend) == []  # no host wait inside the capture
    cell.refresh_from_host(q, [5, 6])
    assert waits(backend) == upload  # the retired block's upload, waited for after the capture
    cell.refresh_from_host(q, [7, 8])
    assert waits(backend)[:1] == upload and waits(backend).count(upload[0]) == 1  # and only once
    backend.synchronize()
    assert cell.device.cpu().tolist() == [7, 8]


def test_only_a_staged_refresh_outside_a_capture_records_an_upload_event_to_wait_for(backend: Backend) -> None:
    q = backend.default_queue()
    unstaged = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64), staged=False)
    staged = PersistentStepInput().bind(backend, backend.alloc((2,), torch.int64))
    backend.trace.clear()
    unstaged.refresh_from_host(q, [1, 2])
    unstaged.refresh_from_host(q, [3, 4])
    assert [e.op for e in backend.trace] == ["copy", "copy"]  # nothing to wait for: no staging block
    g = BreakableGraph(backend, CaptureMode.FULL)
    with GraphCaptureScope(backend, q, g):
        backend.trace.clear()
        staged.refresh_from_host(q, [5, 6])
        assert [e.op for e in backend.trace] == ["copy"]  # no event recorded inside the capture
    backend.trace.clear()
    side = backend.new_queue()
    staged.refresh_from_host(side, [7, 8])
    # no wait (nothing was uploaded before); the upload's event is recorded on the queue that uploads
    assert [(e.op, e.queue) for e in backend.trace] == [("new_queue", side.id), ("copy", side.id),
                                                        ("record_event", side.id)]
    backend.synchronize()
    assert (unstaged.device.cpu().tolist(), staged.device.cpu().tolist()) == ([3, 4], [7, 8])
