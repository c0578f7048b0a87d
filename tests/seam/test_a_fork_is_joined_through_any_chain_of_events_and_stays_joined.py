"""Forks and joins on the CPU emulator, as real CUDA judges them at ``end_capture`` (H200 witnesses).

A side queue forked into a capture is joined when the origin queue waits on an event that is ordered
after all of its work: directly, or through a chain of events over other side queues (H200
``transitive_join``). A fork that issued no work needs no join (``empty_fork_unjoined``). A join
stays a join when the origin later waits on an OLDER event of the same queue as well (waits only add
dependencies). A side queue left with unjoined work is refused at the close with
``UnjoinedForkError`` naming the queues, CUDA's error and the two ways to join. A capturing queue that
waits on an event recorded outside the capture (before it began, or on a queue outside it) is
refused at the wait with ``CaptureDependencyError`` naming the waiting queue, the event and its queue.
"""

from __future__ import annotations

from typing import Iterator

import pytest
import torch

from seam import CaptureDependencyError, EmulatedBackend, UnjoinedForkError


@pytest.fixture
def emu() -> Iterator[EmulatedBackend]:
    backend = EmulatedBackend()
    yield backend
    backend.abort_capture(backend.default_queue())  # a test that failed mid-capture leaves none open


def open_with_a_fork(emu: EmulatedBackend):  # type: ignore[no-untyped-def]
    """A capture open on the default queue with one side queue forked into it, and a device 0.0."""
    q, side = emu.default_queue(), emu.new_queue()
    x = emu.to_device(torch.tensor([0.0]))
    emu.begin_capture(q)
    emu.wait_event(side, emu.record_event(q))
    return q, side, x


def test_a_chain_of_joins_over_two_side_queues_joins_the_last_one_and_replays(emu: EmulatedBackend) -> None:
    q, a, b = emu.default_queue(), emu.new_queue(), emu.new_queue()
    x = emu.to_device(torch.tensor([0.0]))
    emu.begin_capture(q)
    emu.wait_event(a, emu.record_event(q))
    emu.wait_event(b, emu.record_event(a))
    with emu.use_queue(b):
        x.add_(1)
    emu.wait_event(a, emu.record_event(b))  # b -> a
    emu.wait_event(q, emu.record_event(a))  # a -> origin: b is joined through a
    graph = emu.end_capture(q)
    emu.replay(graph, q)
    emu.replay(graph, q)
    assert x.tolist() == [2.0]


def test_a_join_stays_a_join_when_the_origin_also_waits_on_an_older_event_of_that_queue(emu: EmulatedBackend) -> None:
    q, side, x = open_with_a_fork(emu)
    with emu.use_queue(side):
        x.add_(1)
    older = emu.record_event(side)
    with emu.use_queue(side):
        x.add_(1)
    emu.wait_event(q, emu.record_event(side))  # joined after ALL of side's work...
    emu.wait_event(q, older)  # ...and an older point of side's work adds nothing
    graph = emu.end_capture(q)
    emu.replay(graph, q)
    assert x.tolist() == [2.0]


def test_a_fork_that_issued_no_work_needs_no_join(emu: EmulatedBackend) -> None:
    q, side, x = open_with_a_fork(emu)
    x.add_(1)
    graph = emu.end_capture(q)
    emu.replay(graph, q)
    assert x.tolist() == [1.0]


def test_an_unjoined_fork_is_refused_at_the_close_naming_the_queue_cudas_error_and_both_ways_to_join(emu: EmulatedBackend) -> None:
    q, side, x = open_with_a_fork(emu)
    with emu.use_queue(side):
        x.add_(1)
    with pytest.raises(UnjoinedForkError) as refused:
        emu.end_capture(q)
    assert str(refused.value) == (
        f"side queue(s) [{side.id}] forked into the capture were not joined before end_capture "
        "(real CUDA: cudaErrorStreamCaptureUnjoined); join them with record_event + wait_event "
        "or tell the scope with note_fork so it joins them")
    assert not emu.capturing


def expected_dependency_refusal(waiting: int, event: int, recorded_on: int) -> str:
    return (f"queue {waiting} is capturing and was made to wait on event {event}, recorded on queue {recorded_on} "
            "outside the capture (CUDA: dependency created on uncaptured work); synchronize that work before the "
            "capture begins, or record the event inside the capture")


def test_a_wait_on_an_event_recorded_before_the_capture_is_refused_naming_queue_event_and_its_queue(emu: EmulatedBackend) -> None:
    q, side = emu.default_queue(), emu.new_queue()
    before = emu.record_event(side)
    emu.begin_capture(q)
    with pytest.raises(CaptureDependencyError) as refused:
        emu.wait_event(q, before)
    assert str(refused.value) == expected_dependency_refusal(q.id, before.id, side.id)
    emu.abort_capture(q)


def test_a_wait_on_an_event_of_a_queue_outside_the_capture_is_refused_too(emu: EmulatedBackend) -> None:
    q, outside = emu.default_queue(), emu.new_queue()
    emu.begin_capture(q)
    ev = emu.record_event(outside)  # recording it is fine: that queue simply is not capturing
    with pytest.raises(CaptureDependencyError) as refused:
        emu.wait_event(q, ev)
    assert str(refused.value) == expected_dependency_refusal(q.id, ev.id, outside.id)
    emu.abort_capture(q)


def test_a_queue_outside_the_capture_may_wait_on_an_event_recorded_before_it(emu: EmulatedBackend) -> None:
    q, side, outside = emu.default_queue(), emu.new_queue(), emu.new_queue()
    before = emu.record_event(side)
    emu.begin_capture(q)
    emu.wait_event(outside, before)  # not capturing: an ordinary wait
    emu.end_capture(q)
