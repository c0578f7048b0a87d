"""Which machinery the MoE driver runs: one FULL segment, and token ids re-read from the DEVICE each step.

Measured with ``python -m tests.drivers.redfirst`` (off-tree copies, SEAM_ARMS=cpu-emulated).
Red first against ``unmigrate-moe`` (SEAM_ARMS=cpu-emulated): 5 cases, 1 passed, 4 failed.
Green after (this tree): 5 cases, 5 passed, 0 failed.
Under ``moe-no-device-refresh``: 5 cases, 3 passed, 2 failed (the device-refresh counter case and the graph token-comparison case; test_moe_exact.py reds too, 2 of 2, because the values really change).
"""

from __future__ import annotations

from functools import partial

from drivers import moe
from drivers.config import DriverConfig
from drivers.scenarios import device_of, run_scenario
from drivers.tiny_model import EagerReference, moe_ffn
from drivers.token_mirror import TokenMirror
from seam import Backend, StepInputStats, get_graph_break_stats, get_step_input_stats

from .machinery import machinery_ops
from .probe import cudagraph_off, rollback_all

STEPS = 4


def test_the_first_step_captures_one_full_segment_through_a_scope_and_every_step_replays_it(backend: Backend) -> None:
    run_scenario("moe", backend, steps=STEPS)
    stats = get_graph_break_stats()
    assert (stats.segments_captured, stats.breaks, stats.replays, stats.inert_scopes) == (1, 0, STEPS, 0)
    assert machinery_ops(backend) == ["launch", "synchronize", "begin_capture", "end_capture"] + ["replay"] * STEPS


def test_every_step_re_reads_its_token_ids_from_the_device_and_only_positions_from_the_host(backend: Backend) -> None:
    run_scenario("moe", backend, steps=STEPS)
    assert get_step_input_stats() == StepInputStats(binds=2, host_refreshes=STEPS, device_refreshes=STEPS)


def test_graph_replays_decode_the_ids_the_runner_wrote_on_the_device_each_step(backend: Backend) -> None:
    cfg = DriverConfig()
    first = [5, 9]
    with backend.use_queue(backend.default_queue()):
        mirror = TokenMirror(backend, cfg.slots, depth=1)
        mirror.seed(first)
        driver = moe.MoeDriver(backend, cfg)
        fed = []
        for position in range(STEPS + 2):
            fed.append(mirror.current().tolist())
            mirror.publish(driver.step(mirror.current(), position))
    assert get_graph_break_stats().segments_captured == 1
    assert fed == EagerReference(cfg, device_of(backend)).greedy(first, STEPS + 2, partial(moe_ffn, top_k=cfg.top_k)), "a replay decoded stale token ids"
    assert get_step_input_stats().device_refreshes == STEPS + 2


def test_seam_cudagraph_0_keeps_moe_on_the_eager_lane_one_forward_per_step(backend: Backend, arm: str) -> None:
    got = cudagraph_off(arm)["moe"]
    assert got == {"lane": "eager", "begin_captures": 0, "segments_captured": 0, "inert_scopes": 0, "launches": 3}


def test_seam_moe_graph_0_rolls_moe_back_to_the_eager_lane(backend: Backend, arm: str) -> None:
    got = rollback_all(arm)["moe"]
    assert got == {"lane": "eager", "begin_captures": 0, "segments_captured": 0, "inert_scopes": 0, "launches": 3}
