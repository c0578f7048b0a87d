"""Lane identity: fingerprints from two child processes, compared key by key."""

from __future__ import annotations

from pathlib import Path

from harness.rows.executor import Executor
from harness.judge.lane import compare, judge_lane
from harness.gates.model import Expectation, Gate, LaneSide, Origin
from reports.outcome import Verdict
from tests.reports.fixture_projects import shared_server, write_project

# A driver whose admission predicate forgets the switch: with capture off on a capture-capable
# backend it still takes the capture lane and copies once more (the seed's double forward).
DRIVER = (
    "import os\n\nCAPTURE = os.environ.get('TOY_CUDAGRAPH', '1') != '0'\n\n\n"
    "def fingerprint(backend):\n"
    "    capture_lane = backend != 'eager' and (CAPTURE or os.environ.get('TOY_BUG') == '1')\n"
    "    return {'lane': 'capture' if capture_lane else 'eager', 'copies': 5 if capture_lane else 4,\n"
    "            'launches': 2, 'output_digest': 'abc123'}\n"
)


def lane_gate(env: dict[str, str], lane: str = "same") -> Gate:
    return Gate(id="lane", kind="lane-identity", title="lane", origin=Origin("t.yaml"), env=env,
                fingerprint="toy_driver:fingerprint", control=LaneSide("eager"),
                subject=LaneSide("cpu-emulated", {"TOY_CUDAGRAPH": "0"}), expect=Expectation(lane=lane))


def judge(tmp_path: Path, env: dict[str, str], lane: str = "same"):
    tree = write_project(tmp_path / "p", {"toy_driver.py": DRIVER})
    return judge_lane(lane_gate(env, lane), "cpu-emulated", Executor(shared_server(), tmp_path / "w"), tree, 60)


def test_a_subject_with_capture_off_on_the_control_lane_is_same_lane(tmp_path):
    outcome = judge(tmp_path, {})
    assert outcome.verdict is Verdict.PASS and outcome.message.startswith("SAME-LANE")
    assert "values IDENTICAL" in outcome.message


def test_the_double_forward_bug_is_different_lane_with_both_sides_numbers_and_identical_values(tmp_path):
    outcome = judge(tmp_path, {"TOY_BUG": "1"})
    assert outcome.verdict is Verdict.FAIL
    assert "DIFFERENT-LANE: copies control=4 subject=5" in outcome.message and "values IDENTICAL" in outcome.message
    assert judge(tmp_path / "again", {"TOY_BUG": "1"}, lane="different").verdict is Verdict.PASS


def test_value_keys_are_compared_but_reported_apart_from_the_lane():
    result = compare({"copies": 4, "output_digest": "a"}, {"copies": 4, "output_digest": "b"})
    assert result.same_lane and not result.values_identical
    assert result.describe().endswith("values DIFFER (output_digest)")
