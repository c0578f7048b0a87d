"""``TokenMirror``: the runner's asynchronous device-token mirror, a ring written on the queue.

Under an asynchronous scheduler the runner samples each step's tokens ON THE DEVICE and splices them
into a device buffer; the host vector stays deliberately stale, because reading it back is the
synchronize the async path exists to remove. ``depth`` is how many rows the ring holds (how many
steps may be in flight); a device cursor names the row the NEXT step reads. Everything here is a
fixed-shape device operation, so a captured graph that reads ``current()`` re-reads the ring at
REPLAY time through the cursor, whichever row is live.
"""

from __future__ import annotations

from typing import Sequence

import torch

from seam import Backend


class TokenMirror:
    """A ``[depth, slots]`` ring of device token ids and the device cursor of the live row."""

    def __init__(self, backend: Backend, slots: int, depth: int) -> None:
        if depth < 1:
            raise ValueError(f"a token mirror needs depth >= 1, got {depth}")
        self.backend = backend
        self.depth = depth
        self.ring = backend.alloc((depth, slots), torch.int64)  # [D, B]
        self.cursor = backend.alloc((1,), torch.int64)  # [1]
        self._staging = backend.alloc_pinned((slots,), torch.int64)  # [B]
        #: Steps published so far, as the HOST counts them. ``published % depth`` names the live row
        #: too, but only where host code runs: a captured graph bakes the row it saw at capture.
        self.published = 0

    def seed(self, tokens: Sequence[int]) -> None:
        """Put the first tokens in the live row (the one upload from the host)."""
        self.backend.host_write(self._staging, torch.tensor(list(tokens), dtype=torch.int64))
        self.backend.copy(self.ring[0], self._staging, self.backend.default_queue())

    def current(self) -> torch.Tensor:
        """The live row, selected ON THE DEVICE by the cursor."""
        return self.ring.index_select(0, self.cursor).view(-1)  # [B]

    def publish(self, logits: torch.Tensor) -> None:
        """The runner: sample greedily on the device, write the next row, advance the cursor."""
        with self.backend.use_queue(self.backend.default_queue()):
            self.backend.launch(self._publish, logits)
        self.published += 1

    def _publish(self, logits: torch.Tensor) -> None:
        following = torch.remainder(self.cursor + 1, self.depth)  # [1]
        self.ring.index_copy_(0, following, logits.argmax(-1).view(1, -1))
        self.cursor.copy_(following)
