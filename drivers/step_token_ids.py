"""``StepTokenIds``: a decode step's token ids as a capture-stable input refreshed FROM THE DEVICE.

The runner's device combine writes each step's sampled ids into a device buffer while the host
vector stays stale (seed 004). ``refresh`` copies that device source into the bound buffer on the
queue, ordered after whatever produced it, and counts as a ``device_refresh``: the observable that
tells a step which re-read the device ids from one that replayed yesterday's.
"""

from __future__ import annotations

import torch

from seam import Backend, PersistentStepInput, Queue


class StepTokenIds:
    """The ``[B, T]`` token ids one decode step reads."""

    def __init__(self, backend: Backend, slots: int, steps: int = 1) -> None:
        self.cell = PersistentStepInput().bind(backend, backend.alloc((slots, steps), torch.int64))  # [B, T]

    @property
    def ids(self) -> torch.Tensor:
        """The bound device buffer the forward reads (its address never moves)."""
        return self.cell.device  # type: ignore[return-value]

    def refresh(self, queue: Queue, device_ids: torch.Tensor) -> None:
        """Re-read this step's ids from the device source, on ``queue``."""
        self.cell.refresh_from_device(queue, device_ids)
