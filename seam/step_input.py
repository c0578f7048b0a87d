"""``PersistentStepInput``: one per-step device input whose ADDRESS never moves (seed 004).

A captured graph bakes the addresses it read. A per-step input reallocated each step cannot be read
by a replay at all, and one refreshed from a host vector is only as fresh as that vector. This binds a
device buffer the CALLER owns and refreshes it IN PLACE, from the host (through a pinned staging
block, a true asynchronous upload) or from a device source (on the queue, ordered after whatever
produced it). Which arm ran is an observable (``last_source`` and the counters), because both arms
leave bytes in the buffer and every pointer unmoved, and only one is right under an async mirror.

Counting rules: a ZERO-element refresh still counts and sets ``last_source`` (the arm was chosen;
only the copy is skipped); a refresh over the capacity is REFUSED and counts nothing; re-binding
resets this cell's counters (a count that outlived its graph is a number nobody can trust).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import torch

from seam import collector
from seam.errors import StepInputError

if TYPE_CHECKING:
    from seam.backend import Backend, Event, Queue


class StepInputSource(enum.Enum):
    """Which arm last refreshed a cell."""

    UNSET = "unset"  #: bound, never refreshed
    HOST = "host"  #: refresh_from_host: as fresh as the host vector, and no fresher
    DEVICE = "device"  #: refresh_from_device: re-reads the live device source


@dataclass(frozen=True)
class StepInputStats:
    """Process-wide step-input counters (``get_step_input_stats()``)."""

    binds: int = 0
    host_refreshes: int = 0
    device_refreshes: int = 0


_counters: dict[str, int] = {f.name: 0 for f in dataclasses.fields(StepInputStats)}


def get_step_input_stats() -> StepInputStats:
    return StepInputStats(**_counters)


def reset_step_input_stats() -> None:
    for name in _counters:
        _counters[name] = 0


class PersistentStepInput:
    """One capture-stable per-step input cell."""

    def __init__(self) -> None:
        self._backend: Backend | None = None
        #: The bound device buffer (the caller's; never freed here).
        self.device: torch.Tensor | None = None
        #: The pinned host staging block, when staged.
        self.staging: torch.Tensor | None = None
        self.host_refreshes = 0
        self.device_refreshes = 0
        self.last_source = StepInputSource.UNSET
        #: The event after the last upload out of the staging block (``None``: the block is free).
        self._staging_busy: Event | None = None
        #: A staging block replaced inside a capture, with the event of the upload that may still read it.
        self._retired: tuple[torch.Tensor, Event] | None = None

    # -- binding -------------------------------------------------------------------------------
    def bind(self, backend: "Backend", device: torch.Tensor, *, staged: bool = True) -> "PersistentStepInput":
        """Bind the caller-owned contiguous ``device`` buffer; capacity is its element count."""
        if not device.is_contiguous():
            raise StepInputError("PersistentStepInput.bind needs a contiguous device buffer")
        self._backend = backend
        self.device = device
        self.staging = backend.alloc_pinned((device.numel(),), device.dtype) if staged else None
        self._staging_busy = None
        self._retired = None
        self.host_refreshes = self.device_refreshes = 0
        self.last_source = StepInputSource.UNSET
        _counters["binds"] += 1
        return self

    def unbind(self) -> None:
        """Forget the buffer and release the staging block."""
        self._backend, self.device, self.staging = None, None, None

    @property
    def bound(self) -> bool:
        return self.device is not None

    @property
    def capacity(self) -> int:
        """Elements the captured graph reads; no refresh may exceed it."""
        return 0 if self.device is None else self.device.numel()

    @property
    def staged(self) -> bool:
        return self.staging is not None

    def address(self) -> int:
        """The bound buffer's address (what a captured graph baked)."""
        return self._require().data_ptr()

    # -- refreshing ----------------------------------------------------------------------------
    def refresh_from_host(self, queue: "Queue", src: torch.Tensor | Sequence[int | float]) -> None:
        """Copy a host vector into the buffer's prefix, through the pinned staging block if staged."""
        device = self._require()
        host = self._as_flat(src, device)
        self._count(StepInputSource.HOST)
        if host.numel() == 0:
            return
        n = host.numel()
        backend = self._backend
        if self.staging is not None:
            # The previous upload may still be reading the staging block (an ASYNC copy): wait for
            # it before the host overwrites the block. The H200 showed the race under load.
            if self._staging_busy is not None:
                if collector.any_capture_open():
                    # A host wait is refused while a capture is open (CUDA's global mode): write a FRESH
                    # staging block instead of waiting for the one the previous upload may still read.
                    # The graph and every later refresh use the new block; the old one is kept alive
                    # until that upload is known done.
                    self._retired = (self.staging, self._staging_busy)
                    self.staging = backend.alloc_pinned(tuple(self.staging.shape), self.staging.dtype)  # type: ignore[union-attr]
                else:
                    backend.event_synchronize(self._staging_busy)  # type: ignore[union-attr]
                self._staging_busy = None
            if self._retired is not None and not collector.any_capture_open():
                backend.event_synchronize(self._retired[1])  # type: ignore[union-attr]
                self._retired = None
            backend.host_write(self.staging[:n], host)  # type: ignore[union-attr]
            host = self.staging[:n]
        backend.copy(device.view(-1)[:n], host, queue)  # type: ignore[union-attr]
        if self.staging is not None and not backend.capturing:  # type: ignore[union-attr]
            self._staging_busy = backend.record_event(queue)  # type: ignore[union-attr]

    def refresh_from_device(self, queue: "Queue", src: torch.Tensor) -> None:
        """Copy a device source into the buffer's prefix, on ``queue`` (ordered after its producer)."""
        device = self._require()
        flat = self._as_flat(src, device)
        self._count(StepInputSource.DEVICE)
        if flat.numel() == 0:
            return
        self._backend.copy(device.view(-1)[: flat.numel()], flat, queue)  # type: ignore[union-attr]

    # -- helpers -------------------------------------------------------------------------------
    def _require(self) -> torch.Tensor:
        if self.device is None or self._backend is None:
            raise StepInputError("PersistentStepInput is not bound: call bind(backend, buffer) first")
        return self.device

    def _as_flat(self, src: torch.Tensor | Sequence[int | float], device: torch.Tensor) -> torch.Tensor:
        t = src if isinstance(src, torch.Tensor) else torch.tensor(list(src), dtype=device.dtype)
        if t.dtype != device.dtype:
            raise StepInputError(f"refresh of dtype {t.dtype} into a {device.dtype} step input")
        if t.numel() > self.capacity:
            raise StepInputError(
                f"refresh of {t.numel()} elements REFUSED: the bound buffer holds {self.capacity}; "
                "a larger input needs a new buffer, a re-bind and a recapture"
            )
        return t.reshape(-1)

    def _count(self, source: StepInputSource) -> None:
        self.last_source = source
        if source is StepInputSource.HOST:
            self.host_refreshes += 1
            _counters["host_refreshes"] += 1
        else:
            self.device_refreshes += 1
            _counters["device_refreshes"] += 1
