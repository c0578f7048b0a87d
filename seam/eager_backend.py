"""``EagerBackend``: a CPU backend that cannot capture — the control lane of lane-identity checks."""

from __future__ import annotations

from typing import Any

import torch

from seam.backend import Backend, Queue, RawGraph
from seam.errors import CaptureUnsupportedError


class EagerBackend(Backend):
    """Runs everything eagerly on the CPU; any capture request is refused, so scopes go inert."""

    name = "eager"
    can_capture = False

    def _native_alloc(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        return torch.zeros(shape, dtype=dtype)

    def _native_alloc_pinned(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        return torch.zeros(shape, dtype=dtype)

    def _unsupported(self) -> CaptureUnsupportedError:
        return CaptureUnsupportedError("EagerBackend cannot capture: take the eager lane (can_capture is False)")

    def _native_begin_capture(self, queue: Queue, pool: Any) -> None:
        raise self._unsupported()

    def _native_end_capture(self, queue: Queue) -> RawGraph:
        raise self._unsupported()

    def _native_abort_capture(self, queue: Queue) -> None:
        return None

    def _native_replay(self, graph: RawGraph, queue: Queue) -> None:
        raise self._unsupported()
