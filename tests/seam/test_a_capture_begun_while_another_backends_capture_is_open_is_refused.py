"""A capture begun while another backend's capture is open is refused, and the open one is unharmed.

On the H200, a second capture can begin while one is open, but it can never end: CUDA refuses its
``capture_end`` ("operation not permitted when stream is capturing") and invalidates the first
capture too, so both are lost (``scripts/abort_probe.py``, ``evidence/h200-abort-probe-cd04dd1.txt``;
the emulator used to let both end). The seam refuses the second ``begin_capture`` before CUDA sees
it, on every arm, naming the fix; the open capture then ends and replays as if nothing happened.
"""

from __future__ import annotations

import pytest
import torch

from seam import Backend, BreakableGraph, CaptureMode, CaptureStateError, GraphCaptureScope

REFUSAL = ("begin_capture while another backend's capture is open in this process: CUDA cannot end a capture "
           "while another is open (H200: 'operation not permitted when stream is capturing', and the open one is "
           "invalidated too); end the open capture first")


def test_a_second_backends_begin_capture_is_refused_and_the_open_capture_still_replays(backend: Backend) -> None:
    other = type(backend)()
    q, x, y = backend.default_queue(), backend.alloc((4,)), other.alloc((4,))
    backend.begin_capture(q)
    with backend.use_queue(q):
        x.add_(1)
    with pytest.raises(CaptureStateError) as refused:
        other.begin_capture(other.default_queue())
    assert str(refused.value) == REFUSAL
    assert not other.capturing and backend.capturing
    graph = backend.end_capture(q)
    backend.replay(graph, q)
    backend.replay(graph, q)
    backend.synchronize()
    assert x.cpu().tolist() == [2.0, 2.0, 2.0, 2.0]
    other.begin_capture(other.default_queue())  # with the first one closed, the second backend captures
    with other.use_queue(other.default_queue()):
        y.add_(5)
    other.replay(other.end_capture(other.default_queue()), other.default_queue())
    other.synchronize()
    assert y.cpu().tolist() == [5.0, 5.0, 5.0, 5.0]


def test_a_scope_opened_inside_another_backends_scope_is_refused_and_neither_graph_is_captured(
        backend: Backend) -> None:
    other = type(backend)()
    outer, inner = BreakableGraph(backend, CaptureMode.FULL), BreakableGraph(other, CaptureMode.FULL)
    x = backend.alloc((4,))
    with pytest.raises(CaptureStateError) as refused:
        with torch.no_grad(), GraphCaptureScope(backend, backend.default_queue(), outer):
            x.add_(1)
            with GraphCaptureScope(other, other.default_queue(), inner):
                pass
    assert str(refused.value) == REFUSAL
    assert not backend.capturing and not other.capturing
    assert not outer.captured and not inner.captured
