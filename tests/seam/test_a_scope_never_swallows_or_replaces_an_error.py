"""Errors out of a capture scope: the body's own error, unchanged, whether the scope captures or not.

An inert scope (a backend that cannot capture) must let the body's error through as a capturing one
does; a capturing scope aborts on ITS queue (the backend trace shows it) before the error leaves, and
on CUDA even a failure to free the given-up graph does not replace the body's error; a PIECEWISE
break that returns a tensor is refused with the whole reason and what to do instead.
"""

from __future__ import annotations

import pytest
import torch

from seam import (
    Backend,
    BreakableGraph,
    BreakResultError,
    CaptureMode,
    CudaBackend,
    EagerBackend,
    EmulatedBackend,
    GraphCaptureScope,
    UnjoinedForkError,
    current_scope,
    get_graph_break_stats,
)


class BodyError(Exception):
    pass


def test_an_inert_scope_lets_the_bodys_error_out_unchanged() -> None:
    backend = EagerBackend()
    g = BreakableGraph(backend, CaptureMode.FULL)
    ran = []
    with pytest.raises(BodyError, match="^eager body failed$"):
        with GraphCaptureScope(backend, backend.default_queue(), g) as scope:
            ran.append("body")
            raise BodyError("eager body failed")
    assert scope.inert and ran == ["body"] and current_scope() is None
    assert get_graph_break_stats().inert_scopes == 1 and not g.captured


def test_an_inert_scope_after_a_clean_body_returns_normally_and_captures_nothing() -> None:
    backend = EagerBackend()
    g = BreakableGraph(backend, CaptureMode.FULL)
    with GraphCaptureScope(backend, backend.default_queue(), g) as scope:
        pass
    assert scope.inert and g.segments == [] and not g.captured and current_scope() is None


def test_a_failed_capture_is_aborted_on_the_scopes_own_queue_before_the_error_leaves(backend: Backend) -> None:
    q = backend.new_queue()  # not the default queue: the abort must name the capture's queue
    g = BreakableGraph(backend, CaptureMode.FULL)
    backend.trace.clear()
    with pytest.raises(BodyError):
        with GraphCaptureScope(backend, q, g):
            raise BodyError("in the body")
    calls = [(e.op, e.queue) for e in backend.trace if e.op in ("begin_capture", "end_capture", "abort_capture")]
    assert calls == [("begin_capture", q.id), ("abort_capture", q.id)]
    assert not backend.capturing and g.destroyed


@pytest.mark.arm("cuda")
def test_on_cuda_a_graph_that_cannot_be_freed_at_the_abort_does_not_replace_the_bodys_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    backend = CudaBackend()
    x = backend.alloc((4,))

    def reset_fails(self: torch.cuda.CUDAGraph) -> None:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(torch.cuda.CUDAGraph, "reset", reset_fails)
    g = BreakableGraph(backend, CaptureMode.FULL)
    with pytest.raises(BodyError, match="^the body failed$"):
        with GraphCaptureScope(backend, backend.default_queue(), g) as scope:
            x.add_(1)
            raise BodyError("the body failed")
    assert not backend.capturing and current_scope() is None and not g.captured
    assert scope.secondary_error is None, f"the abort raised {scope.secondary_error!r}"
    q = backend.default_queue()
    backend.begin_capture(q)
    with backend.use_queue(q):
        x.add_(1)
    backend.abort_capture(q)  # the raw pair: an abort never raises a secondary error either
    assert not backend.capturing


def test_a_close_that_fails_is_aborted_on_the_scopes_queue_and_its_error_comes_out() -> None:
    backend = EmulatedBackend()  # the emulator's refusal of an unjoined fork; CUDA's is in test_backend_agreement.py
    q, side = backend.new_queue(), backend.new_queue()
    x = backend.alloc((1,))
    g = BreakableGraph(backend, CaptureMode.FULL)
    backend.trace.clear()
    with pytest.raises(UnjoinedForkError):
        with GraphCaptureScope(backend, q, g):
            backend.wait_event(side, backend.record_event(q))  # a fork the scope is not told about
            with backend.use_queue(side):
                x.add_(1)
    calls = [(e.op, e.queue) for e in backend.trace if e.op in ("begin_capture", "end_capture", "abort_capture")]
    assert calls == [("begin_capture", q.id), ("end_capture", q.id)]  # end_capture closed it: nothing to abort
    assert g.destroyed and not g.captured and current_scope() is None and not backend.capturing


def test_a_piecewise_break_returning_a_tensor_is_refused_with_the_whole_reason_and_the_fix(backend: Backend) -> None:
    t = backend.alloc((1,))
    g = BreakableGraph(backend, CaptureMode.PIECEWISE)
    with pytest.raises(BreakResultError) as refused:
        with GraphCaptureScope(backend, backend.default_queue(), g) as scope:
            scope.break_point(lambda: t)
    assert str(refused.value) == (
        "a PIECEWISE break returned a tensor: the next segment would bake the address of memory freed after "
        "capture, and each replay's result lands elsewhere; copy it into a buffer allocated before the capture "
        "(backend.copy) and return nothing")
    assert g.destroyed and not backend.capturing


def test_a_piecewise_break_returning_no_tensor_hands_its_value_back_and_captures_on(backend: Backend) -> None:
    x = backend.to_device(torch.tensor([1.0]))
    g = BreakableGraph(backend, CaptureMode.PIECEWISE)
    with GraphCaptureScope(backend, backend.default_queue(), g) as scope:
        x.add_(1)
        got = scope.break_point(lambda: {"rows": [1, 2], "name": "bridge"})
        x.mul_(3)
    assert got == {"rows": [1, 2], "name": "bridge"}
    g.replay()
    backend.synchronize()
    assert x.cpu().item() == 6.0 and len(g.segments) == 2
