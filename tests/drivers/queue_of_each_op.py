"""``QueueOfEachOp``: a dispatch mode that records, for every tensor operation, the queue the backend had current.

Plain tensor work (a zeroing, a feed-forward, a read-back clone) is no backend call, so the trace
cannot say which queue it was issued on; on CUDA that queue is the stream it runs on.
"""

from __future__ import annotations

from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode

from seam import Backend


class QueueOfEachOp(TorchDispatchMode):
    """``seen``: ``(aten op name, current queue id)`` for every operation run inside the mode."""

    def __init__(self, backend: Backend) -> None:
        super().__init__()
        self.backend = backend
        self.seen: list[tuple[str, int | None]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.seen.append((func.__name__, getattr(self.backend.current_queue(), "id", None)))
        return func(*args, **(kwargs or {}))

    def queues_of(self, fragment: str) -> set[int | None]:
        """The queues the operations whose name holds ``fragment`` ran on."""
        return {q for name, q in self.seen if fragment in name}
