"""A hand-split PIECEWISE raw step with several breaks runs, at every replay, each break right after ITS segment.

``RawStep`` keeps the breaks in capture order; replaying segment ``i`` (``i >= 1``) is preceded by
break ``i - 1``. With two breaks the replay order is segment 0, break A, segment 1, break B,
segment 2, and the values flow through both bridges in that order.
"""

from __future__ import annotations

import torch

from drivers.raw_step import RawInput, RawStep
from seam import CaptureMode, EmulatedBackend

STEPS = 3


def test_two_breaks_run_in_capture_order_between_three_segments_at_every_replay() -> None:
    backend = EmulatedBackend()
    cell = RawInput(backend, (2,))
    first, second = backend.alloc((2,)), backend.alloc((2,))
    order: list[str] = []

    def forward() -> torch.Tensor:
        a = cell.device * 2
        step.break_point(lambda: (order.append("A"), backend.copy(first, a + 1, step.queue)))
        b = first * 3
        step.break_point(lambda: (order.append("B"), backend.copy(second, b - 1, step.queue)))
        return second * 10

    step = RawStep(backend, forward, admitted=True, mode=CaptureMode.PIECEWISE)
    outputs = []
    with backend.use_queue(step.queue):
        for value in range(STEPS):
            cell.refresh_from_host(step.queue, [value, value + 1])
            order.clear()
            outputs.append(step.run().to("cpu").tolist())
            if value:
                assert order == ["A", "B"], "a replay runs break A, then break B"
    assert len(step.segments) == 3
    assert outputs == [[10 * (3 * (2 * v + 1) - 1), 10 * (3 * (2 * (v + 1) + 1) - 1)] for v in range(STEPS)]
