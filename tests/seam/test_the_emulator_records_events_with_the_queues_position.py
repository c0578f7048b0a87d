"""What an event recorded on the CPU emulator carries, as ``record_event`` hands it back.

An event has its own id (the trace names it at its record and at every wait on it), the queue it was
recorded on, whether that queue was part of the open capture (``captured``), and, as emulator
bookkeeping (``Event.version``; the CUDA backend leaves it at 0), the queue's POSITION: how many operations that queue had issued in the open capture
when the event was recorded (a capture starts every queue at 0; a side queue that joins by a wait
starts at 0 too; a queue outside the capture stays at 0). Outside any capture an event is plain:
position 0, not captured, and any queue may wait on it.
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


def details(emu: EmulatedBackend, op: str) -> list[str]:
    return [e.detail for e in emu.trace if e.op == op]


def test_an_event_outside_any_capture_is_on_its_queue_and_any_queue_may_wait_on_it(emu: EmulatedBackend) -> None:
    q, side = emu.default_queue(), emu.new_queue()
    ev = emu.record_event(side)
    assert ev.queue == side and ev.version == 0 and ev.captured is False
    emu.wait_event(q, ev)
    assert details(emu, "wait_event") == [f"event={ev.id} from={side.id}"]


def test_events_recorded_in_a_capture_have_their_own_ids_which_the_trace_names(emu: EmulatedBackend) -> None:
    q, side = emu.default_queue(), emu.new_queue()
    emu.begin_capture(q)
    fork = emu.record_event(q)
    emu.wait_event(side, fork)
    join = emu.record_event(side)
    emu.wait_event(q, join)
    emu.end_capture(q)
    assert isinstance(fork.id, int) and isinstance(join.id, int) and fork.id != join.id
    assert fork.queue == q and join.queue == side and fork.captured and join.captured
    assert details(emu, "record_event") == [f"event={fork.id}", f"event={join.id}"]
    assert details(emu, "wait_event") == [f"event={fork.id} from={q.id}", f"event={join.id} from={side.id}"]


def test_a_capture_starts_its_queue_at_position_0_and_each_recorded_operation_moves_it_by_one(emu: EmulatedBackend) -> None:
    q = emu.default_queue()
    x = emu.to_device(torch.tensor([1.0]))
    emu.begin_capture(q)
    at_start = emu.record_event(q)
    x.add_(1)
    after_one = emu.record_event(q)
    x.mul_(2)
    after_two = emu.record_event(q)
    emu.end_capture(q)
    assert [at_start.version, after_one.version, after_two.version] == [0, 1, 2]


def test_a_side_queue_joins_at_position_0_and_counts_its_own_work(emu: EmulatedBackend) -> None:
    q, side = emu.default_queue(), emu.new_queue()
    x = emu.to_device(torch.tensor([1.0]))
    emu.begin_capture(q)
    x.add_(1)
    emu.wait_event(side, emu.record_event(q))
    joined = emu.record_event(side)
    with emu.use_queue(side):
        x.add_(1)
    worked = emu.record_event(side)
    emu.wait_event(q, worked)
    emu.end_capture(q)
    assert (joined.version, joined.captured) == (0, True)
    assert (worked.version, worked.captured) == (1, True)


def test_an_event_on_a_queue_outside_the_open_capture_is_uncaptured_at_position_0(emu: EmulatedBackend) -> None:
    q, outside = emu.default_queue(), emu.new_queue()
    x = emu.to_device(torch.tensor([1.0]))
    emu.begin_capture(q)
    x.add_(1)
    ev = emu.record_event(outside)
    emu.end_capture(q)
    assert (ev.queue, ev.version, ev.captured) == (outside, 0, False)
