"""``RawStep``: the pre-migration step machinery kept as code: the raw capture pair, plain copies, no scope.

Before the seam every driver captured its step by hand: one eager warm pass, ``synchronize()``,
``begin_capture`` on its queue, the forward, ``end_capture``, then ``replay`` every step, the first
included; ``destroy`` at ``close``. Its inputs were plain device buffers written by a plain
``backend.copy`` from a host vector before each replay (no pinned staging, no registered address),
and its lane was admitted by the driver's own switch alone: ``SEAM_CUDAGRAPH`` was never read.

``RawStep`` has ``GraphedStep``'s interface (constructor, ``run``, ``close``, ``lane``), ``RawInput``
the part of ``PersistentStepInput`` the drivers use, and ``RawTokenIds`` that of ``StepTokenIds``,
so a driver runs on either machinery unchanged (``drivers.step_driver.Machinery``). No driver uses it
as shipped: the ``unmigrate-<driver>`` mutations switch one driver to it, and the red-first, G2 and
G4 gates run the seam tests and the equivalence check against that.
"""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

import torch

from seam import Backend, CaptureMode, PersistentStepInput, Queue, RawGraph, driver_graph_enabled

T = TypeVar("T")


def raw_admitted(backend: Backend, driver: str) -> bool:
    """The pre-seam admission: the backend can capture and the driver's own switch is on (``SEAM_CUDAGRAPH`` unread)."""
    return backend.can_capture and driver_graph_enabled(driver)


class RawInput:
    """A plain device buffer refreshed by a plain ``backend.copy``: no pinned staging, no registered address."""

    def __init__(self, backend: Backend, shape: tuple[int, ...], dtype: torch.dtype = torch.int64) -> None:
        self.backend = backend
        #: The buffer the forward reads.
        self.device = backend.alloc(shape, dtype)

    def refresh_from_host(self, queue: Queue, values: Sequence[int]) -> None:
        """Copy a host vector into the buffer on ``queue`` (a pageable host tensor: no staging)."""
        self.backend.copy(self.device.view(-1), torch.tensor(list(values), dtype=self.device.dtype), queue)

    def refresh_from_device(self, queue: Queue, source: torch.Tensor) -> None:
        """Copy a device tensor into the buffer on ``queue``."""
        self.backend.copy(self.device.view(-1), source, queue)


def raw_input(backend: Backend, shape: tuple[int, ...], dtype: torch.dtype = torch.int64) -> RawInput:
    """``persistent_input``'s pre-seam counterpart: a ``RawInput`` over a fresh buffer of ``shape``."""
    return RawInput(backend, shape, dtype)


class RawTokenIds:
    """``StepTokenIds`` before the seam: the ids are READ BACK to a host vector, then uploaded."""

    def __init__(self, backend: Backend, slots: int, steps: int = 1) -> None:
        self.cell = RawInput(backend, (slots, steps))  # [B, T]

    @property
    def ids(self) -> torch.Tensor:
        """The buffer the forward reads."""
        return self.cell.device

    def refresh(self, queue: Queue, device_ids: torch.Tensor) -> None:
        """A device-to-host read of ``device_ids`` (a synchronization), then a plain upload."""
        self.cell.refresh_from_host(queue, device_ids.tolist())


class RawStep:
    """Run ``forward`` on the lane chosen at construction, through the raw begin/end/replay/destroy pair."""

    def __init__(
        self,
        backend: Backend,
        forward: Callable[[], torch.Tensor],
        *,
        admitted: bool,
        mode: CaptureMode = CaptureMode.FULL,
        inputs: Sequence[PersistentStepInput | RawInput | torch.Tensor] = (),
        warmups: int = 1,
    ) -> None:
        self.backend = backend
        self.queue = backend.default_queue()
        self.forward = forward
        self.mode = mode
        #: The lane every step takes; the raw pair needs a backend that can capture, whatever was admitted.
        self.lane = "capture" if admitted and backend.can_capture else "eager"
        self._warmups = warmups
        del inputs  # the raw pair registers no input address: nothing checks that a buffer stayed put
        #: The captured raw graphs in replay order (PIECEWISE: one more than the breaks).
        self.segments: list[RawGraph] = []
        self._breaks: list[Callable[[], object]] = []
        self._output: torch.Tensor | None = None

    def run(self) -> torch.Tensor:
        """One step's output, copied on the queue."""
        with self.backend.use_queue(self.queue):
            return self._run_on_queue().clone()

    def _run_on_queue(self) -> torch.Tensor:
        if self.lane == "eager":
            return self.backend.launch(self.forward)
        if not self.segments:
            self._capture()
        for index, segment in enumerate(self.segments):
            if index:
                self._breaks[index - 1]()  # the eager work between two hand-split segments
            self.backend.replay(segment, self.queue)
        return self._output  # type: ignore[return-value]

    def _capture(self) -> None:
        for _ in range(self._warmups):
            self.backend.launch(self.forward)  # warm pass
        self.backend.synchronize()
        self.backend.begin_capture(self.queue)
        self._output = self.forward()
        self.segments.append(self.backend.end_capture(self.queue))

    def break_point(self, fn: Callable[[], T]) -> T:
        """PIECEWISE by hand: while capturing, end the segment, run ``fn`` eagerly (again at every replay), begin the next."""
        if self.mode is not CaptureMode.PIECEWISE or not self.backend.capturing:
            return fn()
        self.segments.append(self.backend.end_capture(self.queue))
        self._breaks.append(fn)
        result = fn()
        self.backend.begin_capture(self.queue)
        return result

    def close(self) -> None:
        """Destroy the captured graphs (a later step captures again)."""
        for segment in self.segments:
            self.backend.destroy(segment)
        self.segments.clear()
        self._breaks.clear()
