"""The CPU graph emulator: a replay recomputes from what the captured buffers hold NOW."""

from __future__ import annotations

import pytest
import torch

from seam import (
    BreakableGraph,
    CaptureSyncError,
    EmulatedBackend,
    GraphCaptureScope,
    PageableCopyError,
    UnjoinedForkError,
)


def _capture(backend: EmulatedBackend, body):
    graph = BreakableGraph(backend)
    with GraphCaptureScope(backend, backend.default_queue(), graph):
        out = body()
    return graph, out


def test_changing_an_input_buffer_changes_the_replayed_output(emu: EmulatedBackend) -> None:
    x = emu.alloc((3,))
    graph, out = _capture(emu, lambda: x * 2 + 1)
    for values in ([1.0, 2.0, 3.0], [-1.0, 0.5, 9.0]):
        x.copy_(torch.tensor(values))
        graph.replay()
        assert out.tolist() == [v * 2 + 1 for v in values]


def test_python_side_effects_in_the_body_happen_once(emu: EmulatedBackend) -> None:
    calls: list[int] = []
    x = emu.alloc((2,))

    def body():
        calls.append(1)
        return x + len(calls)  # the host value is baked at capture

    graph, out = _capture(emu, body)
    for _ in range(4):
        graph.replay()
    assert calls == [1] and out.tolist() == [1.0, 1.0]


def test_nothing_runs_during_capture_a_pre_existing_buffer_is_left_as_it_was(emu: EmulatedBackend) -> None:
    kv = emu.to_device(torch.zeros(4))
    graph, _ = _capture(emu, lambda: kv.add_(1))
    assert kv.tolist() == [0.0] * 4
    graph.replay()
    graph.replay()
    assert kv.tolist() == [2.0] * 4


def test_a_captured_output_read_before_any_replay_is_poisoned_not_valid(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.ones(3))
    _, out = _capture(emu, lambda: x * 3)
    assert torch.isnan(out).all()


def test_a_failed_capture_hands_back_no_buffer_as_if_valid(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.ones(3))
    with pytest.raises(ValueError):
        with GraphCaptureScope(emu, emu.default_queue(), BreakableGraph(emu)):
            y = x * 3
            raise ValueError("boom")
    assert torch.isnan(y).all()


def test_views_in_place_out_and_multi_output_ops_replay_correctly(emu: EmulatedBackend) -> None:
    x = emu.alloc((2, 4))
    out_buf = emu.alloc((4,))
    acc = emu.alloc((2, 4))

    def body():
        t = x.t()  # a view
        col = t[1:3]  # a view of a view
        torch.add(x[0], x[1], out=out_buf)  # out=
        acc.mul_(0).add_(x).relu_()  # in place
        values, idx = torch.topk(x, 2, dim=1)  # multi-output
        mx = torch.max(x, dim=0)  # multi-output named tuple
        return col.sum(), values, idx, mx.values

    graph, (colsum, values, idx, mxv) = _capture(emu, body)
    for seed in range(4):
        data = torch.randn(2, 4, generator=torch.Generator().manual_seed(seed))
        x.copy_(data)
        graph.replay()
        assert torch.equal(colsum, data.t()[1:3].sum())
        assert torch.equal(out_buf, data[0] + data[1])
        assert torch.equal(acc, data.relu())
        ev, ei = torch.topk(data, 2, dim=1)
        assert torch.equal(values, ev) and torch.equal(idx, ei)
        assert torch.equal(mxv, data.max(dim=0).values)


def test_an_input_reallocated_after_capture_is_not_seen_by_replay(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.tensor([1.0]))
    graph, out = _capture(emu, lambda: x * 10)
    x = emu.to_device(torch.tensor([5.0]))  # a new buffer: the graph still reads the old one
    graph.replay()
    assert out.tolist() == [10.0]


def test_work_on_a_queue_outside_the_capture_runs_eagerly_and_is_not_recorded(emu: EmulatedBackend) -> None:
    other = emu.new_queue()
    x = emu.alloc((2,))
    y = emu.alloc((2,))

    def body():
        with emu.use_queue(other):
            y.add_(1)  # not forked into the capture: runs now, not at replay
        return x + 1

    graph, _ = _capture(emu, body)
    graph.replay()
    graph.replay()
    assert y.tolist() == [1.0, 1.0]


def test_a_host_sync_inside_capture_raises_capture_sync_error(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.tensor([1.0, 2.0]))
    for sync in (lambda: x.sum().item(), lambda: emu.synchronize(), lambda: torch.nonzero(x)):
        with pytest.raises(CaptureSyncError):
            _capture(emu, sync)
        assert not emu.capturing


def test_a_pageable_copy_to_the_device_inside_capture_raises_pageable_copy_error(emu: EmulatedBackend) -> None:
    dst = emu.alloc((2,))
    pinned = emu.alloc_pinned((2,))
    pageable = torch.ones(2)  # made outside the backend and outside capture: pageable host memory
    with pytest.raises(PageableCopyError):
        _capture(emu, lambda: dst.copy_(pageable))
    with pytest.raises(PageableCopyError):
        _capture(emu, lambda: emu.copy(dst, pageable, emu.default_queue()))
    _capture(emu, lambda: emu.copy(dst, pinned, emu.default_queue()))  # pinned is fine


def test_an_unjoined_fork_raises_unjoined_fork_error_at_the_close(emu: EmulatedBackend) -> None:
    q, side = emu.default_queue(), emu.new_queue()
    x = emu.alloc((2,))

    def body():
        emu.wait_event(side, emu.record_event(q))
        with emu.use_queue(side):
            x.add_(1)

    with pytest.raises(UnjoinedForkError):
        _capture(emu, body)


def test_work_after_a_join_unjoins_the_side_queue_again(emu: EmulatedBackend) -> None:
    q, side = emu.default_queue(), emu.new_queue()
    x = emu.alloc((2,))

    def body():
        emu.wait_event(side, emu.record_event(q))
        emu.wait_event(q, emu.record_event(side))  # joined...
        with emu.use_queue(side):
            x.add_(1)  # ...but more work follows the join

    with pytest.raises(UnjoinedForkError):
        _capture(emu, body)


def test_the_trace_keeps_the_latest_calls_and_stays_bounded_over_many_replays(emu: EmulatedBackend) -> None:
    x = emu.alloc((1,))
    graph, _ = _capture(emu, lambda: x + 1)
    for _ in range(emu.trace.maxlen + 10):
        graph.replay()
    assert len(emu.trace) == emu.trace.maxlen and emu.trace[-1].op == "replay"
