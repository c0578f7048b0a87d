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

from seam.backend import Backend, Event, Queue, RawGraph, new_id
from seam.capture_guard import check_copy
from seam.emulator import CaptureRecorder, DeviceRegistry, EmulatedGraph
from seam.errors import CaptureStateError, UnjoinedForkError


@dataclass
class _ForkLedger:
    """Which queues belong to the open capture, and whether each forked side queue was joined.

    A side queue joins the capture when it waits on an event recorded on a capturing queue; it is
    joined back when the origin queue waits on an event recorded on it AFTER its last operation.
    """

    origin: int
    #: Operations issued per capturing queue (an event remembers the count at its record).
    versions: dict[int, int] = field(default_factory=dict)
    #: For each forked side queue: the version its last join covered (``-1``: never joined).
    joined_at: dict[int, int] = field(default_factory=dict)

    def captures(self, queue_id: int) -> bool:
        return queue_id == self.origin or queue_id in self.joined_at

    def on_wait(self, queue: Queue, event: Event) -> None:
        if self.captures(event.queue.id) and not self.captures(queue.id):
            self.joined_at[queue.id] = -1
            self.versions.setdefault(queue.id, 0)
        elif queue.id == self.origin and event.queue.id in self.joined_at:
            self.joined_at[event.queue.id] = event.version

    def unjoined(self) -> list[int]:
        return sorted(q for q, at in self.joined_at.items() if at != self.versions.get(q, 0))


class EmulatedBackend(Backend):
    """A CPU backend that can capture: replays recompute (see ``seam.emulator``)."""

    name = "cpu-emulated"
    can_capture = True

    def __init__(self) -> None:
        self.registry = DeviceRegistry()
        self._ledger: _ForkLedger | None = None
        self._recorder: CaptureRecorder | None = None
        super().__init__()

    # -- memory --------------------------------------------------------------------------------
    def _native_alloc(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        t = torch.zeros(shape, dtype=dtype)
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
        version = self._ledger.versions.get(queue.id, 0) if self._ledger else 0
        return Event(new_id(), queue, version)

    def _native_wait_event(self, queue: Queue, event: Event) -> None:
        if self._ledger is not None:
            self._ledger.on_wait(queue, event)

    def _recording(self) -> bool:
        return self._ledger is not None and self._ledger.captures(self._current.id)

    def _count_op(self) -> None:
        if self._ledger is not None:
            qid = self._current.id
            self._ledger.versions[qid] = self._ledger.versions.get(qid, 0) + 1

    # -- capture ------------------------------------------------------------------------------
    def _native_begin_capture(self, queue: Queue, pool: Any) -> None:
        self._ledger = _ForkLedger(origin=queue.id, versions={queue.id: 0})
        self._recorder = CaptureRecorder(self.registry, self._recording, self._count_op)
        self._recorder.__enter__()

    def _close_recorder(self) -> EmulatedGraph:
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
