"""An aborted capture leaves the CPU emulator as if no capture had ever opened.

After ``abort_capture`` (a body that raised, or a caller who gave up), events are plain again (not
captured, any queue may wait on them), a copy from pageable host memory into a device buffer runs
now (outside a capture CUDA accepts it), and the next capture records and replays normally.
"""

from __future__ import annotations

from typing import Iterator

import pytest
import torch

from seam import EmulatedBackend


@pytest.fixture
def emu() -> Iterator[EmulatedBackend]:
    backend = EmulatedBackend()
    yield backend
    backend.abort_capture(backend.default_queue())  # a test that failed mid-capture leaves none open


def aborted(emu: EmulatedBackend) -> EmulatedBackend:
    q = emu.default_queue()
    x = emu.to_device(torch.tensor([1.0]))
    emu.begin_capture(q)
    x.add_(1)
    emu.abort_capture(q)
    assert not emu.capturing
    return emu


def test_after_an_abort_events_are_plain_and_any_queue_may_wait_on_them(emu: EmulatedBackend) -> None:
    aborted(emu)
    q, side = emu.default_queue(), emu.new_queue()
    ev = emu.record_event(side)
    assert (ev.queue, ev.version, ev.captured) == (side, 0, False)
    emu.wait_event(q, ev)
    assert emu.trace_ops()[-2:] == ["record_event", "wait_event"]


def test_after_an_abort_a_pageable_copy_to_the_device_runs_now(emu: EmulatedBackend) -> None:
    aborted(emu)
    dst = emu.alloc((2,))
    emu.copy(dst, torch.tensor([3.0, 4.0]), emu.default_queue())
    assert dst.tolist() == [3.0, 4.0]


def test_after_an_abort_the_next_capture_records_and_replays(emu: EmulatedBackend) -> None:
    aborted(emu)
    q = emu.default_queue()
    x = emu.to_device(torch.tensor([1.0]))
    emu.begin_capture(q)
    x.add_(1)
    graph = emu.end_capture(q)
    assert x.tolist() == [1.0]  # nothing ran in the capture
    emu.replay(graph, q)
    emu.replay(graph, q)
    assert x.tolist() == [3.0]
