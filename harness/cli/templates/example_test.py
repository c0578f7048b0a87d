"""seamgate's example, written by `seamgate init`: a step captured once through the seam and replayed.

``double_each`` stands in for YOUR engine's step: import your own driver instead, and point the
example mutation (mutations/seamgate_example.yaml) at your driver's module. This file has a folder
of its own, which your own plain ``pytest`` ignores (conftest.py here), so it never needs torch. The
``backend`` fixture comes with seamgate's pytest plugin and runs each test once per platform arm
(cpu-emulated, cuda); it needs torch and seamgate's seam: ``pip install "seamgate[seam]"``.
"""

import torch

from seam import CaptureMode, capture_one, get_graph_break_stats


def double_each(backend, values):
    """Capture ``x * 2`` once, then refresh ``x`` in place and replay the graph for each value."""
    x = backend.alloc((1,), torch.float32)  # captured by address: refreshed in place, never re-allocated
    captured = capture_one(lambda: backend.launch(torch.mul, x, 2), backend=backend, graph=CaptureMode.FULL,
                           warmups=1)
    outputs = []
    for value in values:
        x.fill_(value)
        captured.graph.replay()
        outputs.append(float(captured.output))
    return outputs


def test_the_step_is_captured_once_and_replayed_for_every_value(backend):
    double_each(backend, [1.0, 2.0, 3.0])
    stats = get_graph_break_stats()
    assert (stats.segments_captured, stats.replays) == (1, 3)


def test_every_value_is_doubled(backend):
    assert double_each(backend, [1.0, 2.0, 3.0]) == [2.0, 4.0, 6.0]
