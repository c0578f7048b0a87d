"""The fork ledger: which queues belong to an open capture, and whether every fork was joined.

Shared by the seam's ``EmulatedBackend`` (queues) and the emulated ``torch.cuda`` (streams): both
see a fork into a capture and its join the same way, as a vector clock per queue.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ForkLedger:
    """Which queues belong to the open capture, and what each one's work is ordered after.

    A vector clock per queue: ``seen[q][p]`` is how many operations of queue ``p`` queue ``q`` is
    ordered after. An event carries its queue's clock at its record; a wait merges it. A side queue
    joins the capture by waiting on an event of a capturing queue; at the close every capturing
    queue's operations must be covered by the origin's clock, DIRECTLY or TRANSITIVELY
    (origin -> A -> B, B -> A, A -> origin is joined), and a fork that issued no work needs no join
    (both as CUDA does: H200 ``transitive_join``, ``empty_fork_unjoined``).
    """

    origin: int
    #: Operations issued per capturing queue.
    versions: dict[int, int] = field(default_factory=dict)
    #: For each capturing queue, the operations of every queue it is ordered after.
    seen: dict[int, dict[int, int]] = field(default_factory=dict)

    def captures(self, queue_id: int) -> bool:
        return queue_id in self.versions

    def clock(self, queue_id: int) -> dict[int, int]:
        """The queue's clock, its own operations included (what an event recorded now carries)."""
        own = {queue_id: self.versions[queue_id]} if queue_id in self.versions else {}
        return {**self.seen.get(queue_id, {}), **own}

    def on_wait(self, queue_id: int, event_queue_id: int, clock: tuple[tuple[int, int], ...]) -> None:
        """Queue ``queue_id`` waits on an event recorded on ``event_queue_id`` carrying ``clock``."""
        if not self.captures(event_queue_id):
            return
        self.versions.setdefault(queue_id, 0)
        mine = self.seen.setdefault(queue_id, {})
        for q, v in dict(clock).items():
            mine[q] = max(mine.get(q, 0), v)

    def unjoined(self) -> list[int]:
        covered = self.seen.get(self.origin, {})
        return sorted(q for q, v in self.versions.items() if q != self.origin and v > covered.get(q, 0))
