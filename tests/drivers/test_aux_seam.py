"""Which machinery the aux driver runs: a side queue forked and joined INSIDE the capture, told to the scope.

Measured with ``python -m tests.drivers.redfirst`` (off-tree copies, SEAM_ARMS=cpu-emulated).
Red first against ``unmigrate-aux`` (SEAM_ARMS=cpu-emulated): 6 cases, 2 passed, 4 failed.
Green after (this tree): 6 cases, 6 passed, 0 failed.
Under ``aux-forget-join``: 6 cases, 4 passed, 2 failed (forks_tracked 1 instead of 2; forks_auto_joined 1 instead of 0).
"""

from __future__ import annotations

from drivers.config import DriverConfig
from drivers.scenarios import run_scenario
from seam import Backend, get_graph_break_stats

from .machinery import captured_region, machinery_ops
from .probe import cudagraph_off, rollback_all

STEPS = 3
LAYERS = DriverConfig().layers


def test_the_first_step_captures_one_full_segment_through_a_scope_and_every_step_replays_it(backend: Backend) -> None:
    run_scenario("aux", backend, steps=STEPS)
    stats = get_graph_break_stats()
    assert (stats.segments_captured, stats.replays, stats.inert_scopes) == (1, STEPS, 0)
    assert machinery_ops(backend) == ["launch", "synchronize", "begin_capture", "end_capture"] + ["replay"] * STEPS


def test_every_layer_forks_the_side_queue_inside_the_capture_and_tells_the_scope(backend: Backend) -> None:
    run_scenario("aux", backend, steps=STEPS)
    assert get_graph_break_stats().forks_tracked == LAYERS


def test_the_model_joins_its_side_queue_itself_so_the_scope_auto_joins_nothing(backend: Backend) -> None:
    run_scenario("aux", backend, steps=STEPS)
    assert get_graph_break_stats().forks_auto_joined == 0
    region = [op for op in captured_region(backend) if op in ("record_event", "wait_event")]
    assert region == ["record_event", "wait_event"] * (2 * LAYERS), "fork then join, per layer, before the close"


def test_the_uncaptured_warm_pass_runs_without_overlap_seed_003(backend: Backend) -> None:
    run_scenario("aux", backend, steps=STEPS)
    ops = backend.trace_ops()
    warm = ops[: ops.index("begin_capture")]
    # A fork or a join is always a wait_event; the step inputs' own staging events are not forks.
    assert "launch" in warm and "wait_event" not in warm
    side = {e.queue for e in list(backend.trace)[: len(warm)] if e.op == "record_event"} - {backend.default_queue().id}
    assert not side, "no event recorded on a side queue during the warm pass"


def test_seam_cudagraph_0_keeps_aux_on_the_eager_lane_one_forward_per_step(backend: Backend, arm: str) -> None:
    got = cudagraph_off(arm)["aux"]
    assert got == {"lane": "eager", "begin_captures": 0, "segments_captured": 0, "inert_scopes": 0, "launches": 3}


def test_seam_aux_graph_0_rolls_aux_back_to_the_eager_lane(backend: Backend, arm: str) -> None:
    got = rollback_all(arm)["aux"]
    assert got == {"lane": "eager", "begin_captures": 0, "segments_captured": 0, "inert_scopes": 0, "launches": 3}
