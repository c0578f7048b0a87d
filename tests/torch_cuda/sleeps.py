"""The tests' one way to learn how many ``torch.cuda._sleep`` cycles make a millisecond on the device they run on (a
GPU's clock, or the emulated device's 1980 MHz: ``seam/torch_cuda/pending.py``)."""

from __future__ import annotations

import statistics

import torch


def cycles_per_ms() -> float:
    """torch.testing's ``get_cycles_per_ms``: sleeps of a million cycles timed by events, the median of five after
    one to warm up (one alone read twice the rate on a busy H100)."""
    def measure() -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(1_000_000)
        end.record()
        end.synchronize()
        return 1_000_000 / start.elapsed_time(end)

    measure()
    return statistics.median(measure() for _ in range(5))
