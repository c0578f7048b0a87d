"""``BreakableGraph``: captured segments with eager break points between them.

FULL has exactly one segment. PIECEWISE with k break points has k+1 segments, and a replay runs
them in order with each break's function re-run EAGERLY between its neighbours. The graph also
remembers the addresses of the inputs registered at capture, and refuses a replay that would read a
moved input (``AddressChangedError``) instead of silently reading the old buffer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence, Union

import torch

from seam.errors import AddressChangedError, CaptureStateError
from seam.mode import CaptureMode
from seam.stats import bump

if TYPE_CHECKING:
    from seam.backend import Backend, Queue, RawGraph
    from seam.step_input import PersistentStepInput

Input = Union[torch.Tensor, "PersistentStepInput"]


def address_of(value: Input) -> int:
    """The device address a captured graph reads for ``value``."""
    if isinstance(value, torch.Tensor):
        return value.data_ptr()
    return value.address()


class BreakableGraph:
    """Segments and eager breaks of one captured forward, replayed as one unit."""

    def __init__(self, backend: "Backend", mode: CaptureMode = CaptureMode.FULL) -> None:
        self.backend = backend
        self.mode = mode
        #: The memory pool every segment of this graph captures into.
        self.pool: Any = backend.new_pool() if backend.can_capture else None
        self._items: list["RawGraph | Callable[[], Any]"] = []
        self._inputs: list[tuple[str, Input, int]] = []
        self.captured = False
        self.destroyed = False

    @property
    def segments(self) -> list["RawGraph"]:
        return [i for i in self._items if not callable(i)]

    @property
    def breaks(self) -> list[Callable[[], Any]]:
        return [i for i in self._items if callable(i)]

    def register_input(self, value: Input, label: str | None = None) -> None:
        """Remember ``value``'s address now (call at capture); replays check it has not moved."""
        self._inputs.append((label or f"input[{len(self._inputs)}]", value, address_of(value)))

    # The scope builds the graph through these two.
    def add_segment(self, segment: "RawGraph") -> None:
        self._items.append(segment)

    def add_break(self, fn: Callable[[], Any]) -> None:
        self._items.append(fn)

    def replay(self, queue: "Queue | None" = None, inputs: Sequence[Input] | None = None) -> None:
        """Run every segment and eager break in order on ``queue`` (default: the backend's)."""
        if self.destroyed or not self.captured:
            state = "destroyed" if self.destroyed else "not captured"
            raise CaptureStateError(f"replay of a graph that is {state}")
        self._check_addresses(inputs)
        queue = queue or self.backend.default_queue()
        for item in self._items:
            if callable(item):
                with self.backend.use_queue(queue):
                    item()
            else:
                self.backend.replay(item, queue)
        bump("replays")

    def _check_addresses(self, inputs: Sequence[Input] | None) -> None:
        if inputs is not None and len(inputs) != len(self._inputs):
            raise AddressChangedError(f"replay got {len(inputs)} inputs, the graph captured {len(self._inputs)}")
        for i, (label, kept, captured) in enumerate(self._inputs):
            now = address_of(inputs[i] if inputs is not None else kept)
            if now != captured:
                raise AddressChangedError(
                    f"{label} moved from 0x{captured:x} (captured) to 0x{now:x}: the graph would read the "
                    "old buffer; refresh the input in place (PersistentStepInput) or recapture"
                )

    def destroy(self) -> None:
        """Release every segment; the graph can no longer replay."""
        for segment in self.segments:
            self.backend.destroy(segment)
        self._items.clear()
        self.destroyed = True
