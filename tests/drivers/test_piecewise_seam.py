"""Which machinery the piecewise driver runs: two captured segments around an EAGER routing break.

Measured with ``python -m tests.drivers.redfirst`` (off-tree copies, SEAM_ARMS=cpu-emulated).
Red first against ``unmigrate-piecewise`` (SEAM_ARMS=cpu-emulated): 5 cases, 2 passed, 3 failed.
Green after (this tree): 5 cases, 5 passed, 0 failed.
"""

from __future__ import annotations

import pytest

from drivers import piecewise
from drivers.config import DriverConfig
from drivers.scenarios import run_scenario
from seam import Backend, BreakableGraph, CaptureMode, CaptureSyncError, GraphCaptureScope, get_graph_break_stats

from .machinery import machinery_ops
from .probe import cudagraph_off, rollback_all

STEPS = 3


def test_the_first_step_captures_two_piecewise_segments_around_one_break(backend: Backend) -> None:
    run_scenario("piecewise", backend, steps=STEPS)
    stats = get_graph_break_stats()
    assert (stats.segments_captured, stats.breaks, stats.replays, stats.inert_scopes) == (2, 1, STEPS, 0)


def test_each_replay_runs_segment_then_the_eager_bridge_copy_then_segment(backend: Backend) -> None:
    run_scenario("piecewise", backend, steps=STEPS)
    ops = [op for op in backend.trace_ops() if op in ("replay", "copy", "begin_capture", "end_capture")]
    capture = ["begin_capture", "end_capture", "copy", "begin_capture", "end_capture"]
    first = ["replay", "copy", "replay"]  # step 1's host refreshes ran before the capture
    later = ["copy", "copy"] + first  # two host refreshes, then segment, bridge copy, segment
    assert ops[ops.index("begin_capture"):] == capture + first + later * (STEPS - 1)
    assert machinery_ops(backend).count("replay") == 2 * STEPS


def test_the_routing_cannot_be_captured_inline_which_is_why_it_is_a_break(backend: Backend) -> None:
    if not backend.can_capture:
        pytest.skip("needs a capture-capable backend")
    driver = piecewise.PiecewiseDriver(backend, DriverConfig())
    # The warmup capture code owes first (capture_one's): the thread's first cuBLAS use inside the capture
    # is refused before the routing's host sync is reached (the H200 at 2ff8db7, this case alone).
    with backend.use_queue(driver.queue):
        driver._forward()
    backend.synchronize()
    with pytest.raises(CaptureSyncError), backend.use_queue(driver.queue):
        with GraphCaptureScope(backend, driver.queue, BreakableGraph(backend, CaptureMode.FULL)):
            driver._forward()


def test_seam_cudagraph_0_keeps_piecewise_on_the_eager_lane_one_forward_per_step(backend: Backend, arm: str) -> None:
    got = cudagraph_off(arm)["piecewise"]
    assert got == {"lane": "eager", "begin_captures": 0, "segments_captured": 0, "inert_scopes": 0, "launches": 3}


def test_seam_piecewise_graph_0_rolls_piecewise_back_to_the_eager_lane(backend: Backend, arm: str) -> None:
    got = rollback_all(arm)["piecewise"]
    assert got == {"lane": "eager", "begin_captures": 0, "segments_captured": 0, "inert_scopes": 0, "launches": 3}
