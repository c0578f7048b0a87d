"""A captured segment dropped without ``destroy()`` is released once, through the collector guard, and never replays.

``RawGraph``'s contract (``seam.backend``): a segment whose last reference goes, or that the cyclic
collector finalizes, releases what it holds natively through ``seam.collector.release``: at once
when no capture is open, right after the last open capture closes otherwise (without invalidating
it). A segment already destroyed is not released a second time, a segment whose construction failed
before it was one is collected silently, and a finalized segment that something brought back to life
refuses to replay. Each segment has its own id, which the trace and the refusals name.
"""

from __future__ import annotations

import gc
import sys
from typing import Callable

import pytest
import torch

from seam import Backend, CaptureStateError, RawGraph
from seam import collector


class Segment(RawGraph):
    """A segment whose native release says which segment it released."""

    def __init__(self, released: list[int]) -> None:
        super().__init__()
        self.released = released

    def native_release(self) -> Callable[[], None]:
        released, gid = self.released, self.id
        return lambda: released.append(gid)


pytestmark = pytest.mark.usefixtures("quiet_collector")


@pytest.fixture
def unraisable(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Errors raised where nobody can catch them (a finalizer)."""
    seen: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    return seen


def test_each_segment_has_its_own_id() -> None:
    first, second = RawGraph(), RawGraph()
    assert isinstance(first.id, int) and isinstance(second.id, int) and first.id != second.id


def test_a_segment_whose_last_reference_goes_is_released_at_once(unraisable: list[object]) -> None:
    released: list[int] = []
    segment = Segment(released)
    gid = segment.id
    del segment
    assert released == [gid] and unraisable == []


def test_a_segment_in_a_reference_cycle_is_released_when_the_collector_finalizes_it(unraisable: list[object]) -> None:
    released: list[int] = []
    segment = Segment(released)
    gid = segment.id
    segment.cycle = segment  # type: ignore[attr-defined]
    del segment
    assert released == []
    gc.collect()
    assert released == [gid] and unraisable == []


def test_a_destroyed_segment_is_not_released_again_when_it_is_collected(backend: Backend,
                                                                      unraisable: list[object]) -> None:
    released: list[int] = []
    segment = Segment(released)
    gid = segment.id
    backend.destroy(segment)
    assert released == [gid]
    segment.cycle = segment  # type: ignore[attr-defined]
    del segment
    gc.collect()
    assert released == [gid] and unraisable == []


def test_a_segment_dropped_inside_a_capture_is_released_right_after_it_closes_and_the_capture_stays_valid(
        backend: Backend) -> None:
    q = backend.default_queue()
    x = backend.to_device(torch.tensor([1.0, 2.0]))
    released: list[int] = []
    segment = Segment(released)
    gid = segment.id
    backend.begin_capture(q)
    try:
        with backend.use_queue(q), torch.no_grad():
            x.mul_(2)
            del segment
        assert released == [] and collector.deferred_releases() == 1
        graph = backend.end_capture(q)
    finally:
        backend.abort_capture(q)
    assert released == [gid] and collector.deferred_releases() == 0
    backend.replay(graph, q)
    backend.synchronize()
    assert x.cpu().tolist() == [2.0, 4.0]


def test_a_segment_whose_construction_failed_is_collected_without_an_error(unraisable: list[object]) -> None:
    class FailsBeforeItIsASegment(RawGraph):
        def __init__(self) -> None:
            raise ValueError("the native capture failed")

    try:
        FailsBeforeItIsASegment()
    except ValueError:
        pass
    gc.collect()
    assert unraisable == []


def test_a_finalized_segment_brought_back_to_life_refuses_to_replay(backend: Backend) -> None:
    q = backend.default_queue()
    x = backend.to_device(torch.tensor([1.0]))
    backend.begin_capture(q)
    with backend.use_queue(q), torch.no_grad():
        x.add_(1)
    graph = backend.end_capture(q)
    revived: list[RawGraph] = []

    class Keeper:
        def __del__(self) -> None:
            revived.append(self.graph)

    keeper = Keeper()
    keeper.graph, graph.keeper = graph, keeper  # type: ignore[attr-defined]
    gid = graph.id
    del keeper, graph
    gc.collect()  # finalizes both; the keeper's finalizer keeps the segment
    assert [g.id for g in revived] == [gid]
    with pytest.raises(CaptureStateError, match=rf"^replay of destroyed graph {gid}$"):
        backend.replay(revived[0], q)
    assert x.cpu().tolist() == [1.0]


def test_a_segment_collected_while_the_interpreter_finalizes_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """At interpreter shutdown a graph kept alive to the end (a reference cycle the last collection breaks) is
    finalized after ``seam.collector``'s names are gone (None): its ``__del__`` raised ``TypeError: 'NoneType' object
    is not callable``, printed as "Exception ignored in: <function RawGraph.__del__>" (seen in session 42 after an
    emulated RNN capture script ended). The process's memory goes with it; nothing is left to release."""
    released: list[int] = []
    segment = Segment(released)
    with monkeypatch.context() as m:
        m.setattr(sys, "is_finalizing", lambda: True)
        m.setattr(collector, "release", None)  # what finalization leaves in a module torn down first
        segment.__del__()
    assert released == []
