"""A buffer allocated, or uploaded with ``to_device``, inside a capture on the default queue belongs to the graph.

As on CUDA (the allocation comes from the capture's pool and its fill is captured): the buffer has
the dtype and shape asked for, and what made it (the zero-fill, the upload's copy) runs again at
every replay, reading its source as it is at that replay.
"""

from __future__ import annotations

import torch

from seam import Backend


def test_a_buffer_allocated_in_a_capture_has_the_dtype_asked_for_and_is_refilled_at_every_replay(backend: Backend) -> None:
    q = backend.default_queue()
    backend.begin_capture(q)
    with backend.use_queue(q), torch.no_grad():
        counts = backend.alloc(3, torch.int64)
        counts.add_(7)
    graph = backend.end_capture(q)
    assert counts.dtype == torch.int64 and counts.shape == (3,)
    backend.replay(graph, q)
    backend.replay(graph, q)
    backend.synchronize()
    assert counts.cpu().tolist() == [7, 7, 7]


def test_an_upload_in_a_capture_copies_its_source_again_at_every_replay(backend: Backend) -> None:
    q = backend.default_queue()
    x = backend.to_device(torch.tensor([1.0, 2.0]))
    backend.begin_capture(q)
    with backend.use_queue(q), torch.no_grad():
        y = backend.to_device(x)
    graph = backend.end_capture(q)
    with torch.no_grad():
        x.fill_(5.0)
    backend.replay(graph, q)
    backend.synchronize()
    assert y.cpu().tolist() == [5.0, 5.0] and y.dtype == torch.float32
