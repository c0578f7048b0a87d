"""``alloc`` inside a capture on the default queue, on the CPU emulator, as on CUDA.

The buffer belongs to the graph: its zero-fill is CAPTURED, so it holds no valid value until the
first replay (poisoned, like every output born in a capture) and every replay fills it with zeros
again before the captured work that follows uses it: an accumulation into it gives the same value
at every replay, never a running total (the fidelity program
``alloc_inside_a_capture_on_the_default_queue_is_refilled_each_replay``, run on both arms).
"""

from __future__ import annotations

from typing import Iterator

import pytest
import torch

from seam import EmulatedBackend


@pytest.fixture
def emu() -> Iterator[EmulatedBackend]:
    backend = EmulatedBackend()
    yield backend
    backend.abort_capture(backend.default_queue())  # a test that failed mid-capture leaves none open


def test_a_buffer_allocated_in_the_capture_is_poisoned_until_replayed_then_refilled_each_replay(emu: EmulatedBackend) -> None:
    q = emu.default_queue()
    x = emu.to_device(torch.tensor([1.0, 2.0]))
    emu.begin_capture(q)
    acc = emu.alloc((2,))
    acc.add_(x)
    graph = emu.end_capture(q)
    assert torch.isnan(acc).all()
    emu.replay(graph, q)
    assert acc.tolist() == [1.0, 2.0]
    emu.replay(graph, q)
    assert acc.tolist() == [1.0, 2.0]
