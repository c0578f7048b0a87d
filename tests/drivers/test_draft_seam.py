"""Which machinery the draft driver runs, and LANE IDENTITY with the switch off (#1352).

Lane identity runs in CHILD processes (switches are read once per process): control = a backend
that cannot capture (``eager``); subject = this arm's backend with ``SEAM_CUDAGRAPH=0``. Their work
fingerprints (copies, launches, lane, output digest) must be equal.

Measured with ``python -m tests.drivers.redfirst`` (off-tree copies, SEAM_ARMS=cpu-emulated).
Red first against ``unmigrate-draft`` (SEAM_ARMS=cpu-emulated): 5 cases, 1 passed, 4 failed.
Green after (this tree): 5 cases, 5 passed, 0 failed.
Under ``draft-double-forward``: 5 cases, 3 passed, 2 failed (the lane-identity case: control launches 4, subject 8, copies 8 and 8, values identical; and the SEAM_CUDAGRAPH=0 lane case).
"""

from __future__ import annotations

from drivers.config import DriverConfig
from drivers.draft import FINGERPRINT_PROPOSES
from drivers.scenarios import run_scenario
from seam import Backend, StepInputStats, get_graph_break_stats, get_step_input_stats

from .machinery import machinery_ops
from .probe import cudagraph_off, draft_fingerprint_in_child, rollback_all

PROPOSES = 4


def test_the_first_propose_captures_one_full_1_plus_k_segment_and_every_propose_replays_it(backend: Backend) -> None:
    run_scenario("draft", backend, steps=PROPOSES)
    stats = get_graph_break_stats()
    assert (stats.segments_captured, stats.breaks, stats.replays, stats.inert_scopes) == (1, 0, PROPOSES, 0)
    assert machinery_ops(backend) == ["launch", "synchronize", "begin_capture", "end_capture"] + ["replay"] * PROPOSES


def test_the_1_plus_k_tokens_and_positions_go_through_pinned_persistent_step_inputs(backend: Backend) -> None:
    _, outputs = run_scenario("draft", backend, steps=PROPOSES)
    assert outputs[0].shape[1] == 1 + DriverConfig().draft_k
    assert get_step_input_stats() == StepInputStats(binds=2, host_refreshes=2 * PROPOSES, device_refreshes=0)


def test_with_seam_cudagraph_0_the_draft_does_exactly_the_eager_lanes_work(backend: Backend, arm: str) -> None:
    control = draft_fingerprint_in_child("eager")
    subject = cudagraph_off(arm)["draft_fingerprint"]
    if control["lane"] != "eager" or control["launches"] != FINGERPRINT_PROPOSES:
        raise AssertionError(f"the control must be the eager lane, one forward per propose: {control}")
    work = ("copies", "launches", "lane")
    assert {k: subject[k] for k in work} == {k: control[k] for k in work}, "SAME-LANE expected"
    if arm == "cpu-emulated":  # the eager control runs on the CPU: values comparable bit for bit
        assert subject["output_digest"] == control["output_digest"]


def test_seam_cudagraph_0_keeps_draft_off_the_capture_lane(backend: Backend, arm: str) -> None:
    got = cudagraph_off(arm)["draft"]
    assert got == {"lane": "eager", "begin_captures": 0, "segments_captured": 0, "inert_scopes": 0, "launches": 3}


def test_seam_draft_graph_0_rolls_draft_back_to_the_eager_lane(backend: Backend, arm: str) -> None:
    got = rollback_all(arm)["draft"]
    assert got == {"lane": "eager", "begin_captures": 0, "segments_captured": 0, "inert_scopes": 0, "launches": 3}
