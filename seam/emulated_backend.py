"""``EmulatedBackend``: a CPU backend that really captures, through the graph emulator.

Device vs host on the CPU: tensors made by the backend (``alloc``, ``to_device``) or born inside a
capture are device memory; ``alloc_pinned`` makes pinned host memory; anything else is pageable.
Queues are logical; each recorded operation is tagged with the queue it was issued on, which is how
a fork into the capture and its join are seen (see ``_ForkLedger``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from seam.backend import Backend, Event, Queue, RawGraph, new_id, refuse_uncaptured_dependency
from seam.capture_guard import HostReadGuard, check_copy
from seam.emulator import CaptureRecorder, DeviceRegistry, EmulatedGraph
from seam.errors import CaptureStateError, UnjoinedForkError


@dataclass
class _ForkLedger:
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

    def on_wait(self, queue: Queue, event: Event) -> None:
        if not self.captures(event.queue.id):
            return
        self.versions.setdefault(queue.id, 0)
        mine = self.seen.setdefault(queue.id, {})
        for q, v in dict(event.clock).items():
            mine[q] = max(mine.get(q, 0), v)

    def unjoined(self) -> list[int]:
        covered = self.seen.get(self.origin, {})
        return sorted(q for q, v in self.versions.items() if q != self.origin and v > covered.get(q, 0))


class EmulatedBackend(Backend):
    """A CPU backend that can capture: replays recompute (see ``seam.emulator``)."""

    name = "cpu-emulated"
    can_capture = True

    def __init__(self) -> None:
        self.registry = DeviceRegistry()
        self._ledger: _ForkLedger | None = None
        self._recorder: CaptureRecorder | None = None
        self._host_reads: HostReadGuard | None = None
        super().__init__()

    # -- memory --------------------------------------------------------------------------------
    def _native_alloc(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        t = torch.zeros(shape, dtype=dtype, device="cpu")  # device= : inside a capture the fill is captured
        self.registry.mark(t, "device")
        return t

    def _native_alloc_pinned(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        t = torch.zeros(shape, dtype=dtype)
        self.registry.mark(t, "pinned")
        return t

    def _check_copy_in_capture(self, dst: torch.Tensor, src: torch.Tensor) -> None:
        if self._recording():
            check_copy(self.registry.kind_of(dst), self.registry.kind_of(src))

    # -- events and the fork ledger ------------------------------------------------------------
    def _native_record_event(self, queue: Queue) -> Event:
        if self._ledger is None:
            return Event(new_id(), queue)
        clock = self._ledger.clock(queue.id)
        return Event(new_id(), queue, clock.get(queue.id, 0), clock=tuple(sorted(clock.items())),
                     captured=self._ledger.captures(queue.id))

    def _native_wait_event(self, queue: Queue, event: Event) -> None:
        if self._ledger is not None:
            if self._ledger.captures(queue.id) and not event.captured:
                refuse_uncaptured_dependency(queue, event)
            self._ledger.on_wait(queue, event)

    def _recording(self) -> bool:
        return self._ledger is not None and self._ledger.captures(self._current.id)

    def _count_op(self) -> None:
        if self._ledger is not None:
            qid = self._current.id
            self._ledger.versions[qid] = self._ledger.versions.get(qid, 0) + 1

    # -- capture ------------------------------------------------------------------------------
    def _native_begin_capture(self, queue: Queue, pool: Any) -> None:
        self._ledger = _ForkLedger(origin=queue.id, versions={queue.id: 0}, seen={queue.id: {}})
        self._recorder = CaptureRecorder(self.registry, self._recording, self._count_op)
        self._recorder.__enter__()
        self._host_reads = HostReadGuard(self.registry.kind_of, self._recording, lambda device: True,
                                         host_factories=True)
        self._host_reads.__enter__()

    def _close_recorder(self) -> EmulatedGraph:
        host_reads, self._host_reads = self._host_reads, None
        if host_reads is not None:
            host_reads.__exit__(None, None, None)
        recorder, self._recorder = self._recorder, None
        if recorder is None:
            raise CaptureStateError("no capture is being recorded")
        recorder.__exit__(None, None, None)
        return recorder.finish()

    def _native_end_capture(self, queue: Queue) -> RawGraph:
        ledger = self._ledger
        graph = self._close_recorder()
        self._ledger = None
        unjoined = ledger.unjoined() if ledger else []
        if unjoined:
            raise UnjoinedForkError(
                f"side queue(s) {unjoined} forked into the capture were not joined before end_capture "
                "(real CUDA: cudaErrorStreamCaptureUnjoined); join them with record_event + wait_event "
                "or tell the scope with note_fork so it joins them"
            )
        return graph

    def _native_abort_capture(self, queue: Queue) -> None:
        self._ledger = None
        if self._recorder is not None:
            self._close_recorder()

    def _native_replay(self, graph: RawGraph, queue: Queue) -> None:
        if not isinstance(graph, EmulatedGraph):
            raise CaptureStateError(f"graph {graph.id} was not captured by an EmulatedBackend")
        graph.replay()
