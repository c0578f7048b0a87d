"""``EagerBackend``'s events: the control lane records, waits on and synchronizes events like any backend.

It cannot capture, but a driver written once for every lane orders its queues with events: each
recorded event is a new one (its own id), belongs to the queue it was recorded on, and waiting on it
or synchronizing with it works and is traced like on any other backend.
"""

from __future__ import annotations

from seam import EagerBackend


def test_each_event_is_new_and_belongs_to_the_queue_it_was_recorded_on_and_waits_are_traced() -> None:
    backend = EagerBackend()
    q, side = backend.default_queue(), backend.new_queue()
    first, second = backend.record_event(side), backend.record_event(q)
    assert first.queue == side and second.queue == q
    assert isinstance(first.id, int) and first.id != second.id
    backend.wait_event(q, first)
    backend.event_synchronize(first)
    assert [(e.op, e.queue, e.detail) for e in backend.trace] == [
        ("new_queue", side.id, ""),
        ("record_event", side.id, f"event={first.id}"),
        ("record_event", q.id, f"event={second.id}"),
        ("wait_event", q.id, f"event={first.id} from={side.id}"),
        ("event_synchronize", side.id, f"event={first.id}"),
    ]
