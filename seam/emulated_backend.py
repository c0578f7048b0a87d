"""``EmulatedBackend``: a CPU backend that really captures, through the graph emulator.

Device vs host on the CPU: tensors made by the backend (``alloc``, ``to_device``) or born inside a
capture are device memory; ``alloc_pinned`` makes pinned host memory; anything else is pageable.
Queues are logical; each recorded operation is tagged with the queue it was issued on, which is how
a fork into the capture and its join are seen (see ``ForkLedger``).
"""

from __future__ import annotations

from typing import Any

import torch

from seam.backend import Backend, Event, Queue, RawGraph, new_id, refuse_uncaptured_dependency
from seam.capture_guard import HostReadGuard, check_copy
from seam.emulator import CaptureRecorder, DeviceRegistry, EmulatedGraph
from seam.errors import CaptureStateError, UnjoinedForkError
from seam.fork_ledger import ForkLedger


class EmulatedBackend(Backend):
    """A CPU backend that can capture: replays recompute (see ``seam.emulator``)."""

    name = "cpu-emulated"
    can_capture = True

    def __init__(self) -> None:
        self.registry = DeviceRegistry()
        self._ledger: ForkLedger | None = None
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
            self._ledger.on_wait(queue.id, event.queue.id, event.clock)

    def _recording(self) -> bool:
        return self._ledger is not None and self._ledger.captures(self._current.id)

    def _count_op(self) -> None:
        if self._ledger is not None:
            qid = self._current.id
            self._ledger.versions[qid] = self._ledger.versions.get(qid, 0) + 1

    # -- capture ------------------------------------------------------------------------------
    def _native_begin_capture(self, queue: Queue, pool: Any) -> None:
        self._ledger = ForkLedger(origin=queue.id, versions={queue.id: 0}, seen={queue.id: {}})
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
