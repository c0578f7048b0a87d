"""Which machinery the dense driver runs: one FULL segment through a scope, replayed every step.

Measured with ``python -m tests.drivers.redfirst`` (off-tree copies, SEAM_ARMS=cpu-emulated).
Red first against ``unmigrate-dense`` (SEAM_ARMS=cpu-emulated): 5 cases, 1 passed, 4 failed.
Green after (this tree): 5 cases, 5 passed, 0 failed.
"""

from __future__ import annotations

from drivers import dense
from drivers.config import DriverConfig
from drivers.scenarios import run_scenario
from drivers.token_mirror import TokenMirror
from seam import Backend, StepInputStats, get_graph_break_stats, get_step_input_stats

from .machinery import captured_region, machinery_ops
from .probe import cudagraph_off, rollback_all

STEPS = 4


def test_the_first_step_captures_one_full_segment_through_a_scope_and_every_step_replays_it(backend: Backend) -> None:
    run_scenario("dense", backend, steps=STEPS)
    stats = get_graph_break_stats()
    assert (stats.segments_captured, stats.breaks, stats.replays, stats.inert_scopes) == (1, 0, STEPS, 0)
    assert machinery_ops(backend) == ["launch", "synchronize", "begin_capture", "end_capture"] + ["replay"] * STEPS


def test_host_tokens_and_positions_reach_the_graph_through_pinned_persistent_step_inputs(backend: Backend) -> None:
    run_scenario("dense", backend, steps=STEPS)
    assert get_step_input_stats() == StepInputStats(binds=2, host_refreshes=2 * STEPS, device_refreshes=0)
    assert backend.trace_ops().count("alloc_pinned") == 2, "one pinned staging block per step input"


def test_with_the_mirror_live_the_graph_still_runs_and_reads_the_tokens_from_the_device_inside_the_capture(
    backend: Backend,
) -> None:
    cfg = DriverConfig(slots=4)
    with backend.use_queue(backend.default_queue()):
        mirror = TokenMirror(backend, cfg.slots, depth=2)
        mirror.seed([1, 2, 3, 4])
        driver = dense.DenseDriver(backend, cfg, mirror=mirror)
        for position in range(STEPS):
            mirror.publish(driver.step(None, position))
    stats, inputs = get_graph_break_stats(), get_step_input_stats()
    assert (stats.segments_captured, stats.replays) == (1, STEPS), "the graph must not be declined"
    assert inputs.device_refreshes == 2, "host code ran twice (warm pass, capture); every replay re-runs the captured copy"
    assert inputs.host_refreshes == STEPS, "only the positions come from the host"
    assert "copy" in captured_region(backend), "the mirror read sits INSIDE the captured region"


def test_seam_cudagraph_0_keeps_dense_on_the_eager_lane_one_forward_per_step(backend: Backend, arm: str) -> None:
    got = cudagraph_off(arm)["dense"]
    assert got == {"lane": "eager", "begin_captures": 0, "segments_captured": 0, "inert_scopes": 0, "launches": 3}


def test_seam_dense_graph_0_rolls_dense_back_to_the_eager_lane(backend: Backend, arm: str) -> None:
    got = rollback_all(arm)["dense"]
    assert got == {"lane": "eager", "begin_captures": 0, "segments_captured": 0, "inert_scopes": 0, "launches": 3}
