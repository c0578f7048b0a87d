"""Which machinery the resident driver runs: one FULL segment over a resident cache, replayed every step.

Measured with ``python -m tests.drivers.redfirst`` (off-tree copies, SEAM_ARMS=cpu-emulated).
Red first against ``unmigrate-resident`` (SEAM_ARMS=cpu-emulated): 6 cases, 1 passed, 5 failed.
Green after (this tree): 6 cases, 6 passed, 0 failed.
"""

from __future__ import annotations

import torch

from drivers import resident
from drivers.config import DriverConfig
from drivers.scenarios import device_of, run_scenario
from drivers.tiny_model import EagerReference
from seam import Backend, CaptureMode, StepInputStats, get_graph_break_stats, get_step_input_stats

from .machinery import machinery_ops
from .probe import cudagraph_off, rollback_all

STEPS = 4


def test_the_first_step_captures_exactly_one_full_segment_and_every_step_replays_it(backend: Backend) -> None:
    run_scenario("resident", backend, steps=STEPS)
    stats = get_graph_break_stats()
    assert (stats.segments_captured, stats.breaks, stats.replays, stats.inert_scopes) == (1, 0, STEPS, 0)
    assert machinery_ops(backend) == ["launch", "synchronize", "begin_capture", "end_capture"] + ["replay"] * STEPS


def test_per_slot_tokens_and_positions_go_through_pinned_persistent_step_inputs(backend: Backend) -> None:
    run_scenario("resident", backend, steps=STEPS)
    assert get_step_input_stats() == StepInputStats(binds=2, host_refreshes=2 * STEPS, device_refreshes=0)


def test_the_captured_graph_is_one_full_segment(backend: Backend) -> None:
    with backend.use_queue(backend.default_queue()):
        driver = resident.ResidentDriver(backend, DriverConfig())
        driver.step([1, 2], [0, 3])
    graph = driver.step_fn.graph
    assert graph is not None and graph.mode is CaptureMode.FULL and len(graph.segments) == 1 and graph.breaks == []


def test_recycling_a_slot_in_place_replays_the_same_graph_without_a_recapture(backend: Backend) -> None:
    cfg = DriverConfig()
    ref = EagerReference(cfg, device_of(backend))
    with backend.use_queue(backend.default_queue()):
        driver = resident.ResidentDriver(backend, cfg)
        for step in range(3):
            driver.step([3, 4], [step, step])
            ref([[3], [4]], [[step], [step]])
        driver.reset_slot(1)
        ref.cache.k[:, 1].zero_()
        ref.cache.v[:, 1].zero_()
        got = driver.step([3, 9], [3, 0]).to("cpu")
    assert get_graph_break_stats().segments_captured == 1, "a recycled slot must not force a recapture"
    assert torch.equal(got, ref([[3], [9]], [[3], [0]]).squeeze(1).to("cpu"))


def test_seam_cudagraph_0_keeps_resident_on_the_eager_lane_one_forward_per_step(backend: Backend, arm: str) -> None:
    got = cudagraph_off(arm)["resident"]
    assert got == {"lane": "eager", "begin_captures": 0, "segments_captured": 0, "inert_scopes": 0, "launches": 3}


def test_seam_resident_graph_0_rolls_resident_back_to_the_eager_lane(backend: Backend, arm: str) -> None:
    got = rollback_all(arm)["resident"]
    assert got == {"lane": "eager", "begin_captures": 0, "segments_captured": 0, "inert_scopes": 0, "launches": 3}
