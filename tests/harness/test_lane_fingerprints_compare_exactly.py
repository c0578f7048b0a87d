"""Lane identity compares fingerprints exactly, and each side runs on the arm being judged.

A work count is a count: 1001 copies is not 1000 copies, however close. A per-step list is compared
whole, in order, with its length: a subject that does one more step, or the same steps in another
order, or one step twice, is a DIFFERENT lane (or DIFFERENT values). ``SEAM_ARMS`` is the arm being
judged, whatever the gate's or a side's environment says: a gate judged on ``cuda`` never reads a
fingerprint measured on another arm.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import pytest

from harness.rows.executor import Call, CallOutcome
from harness.judge.lane import judge_lane
from harness.gates.model import Expectation, Gate, LaneSide, Origin
from reports.outcome import ArmOutcome, Verdict

Fingerprint = Callable[[str, Mapping[str, str]], Any]


@dataclass
class Children:
    """An executor whose child processes answer ``fingerprint(backend, env)``."""

    fingerprint: Fingerprint
    calls: list[Call] = field(default_factory=list)

    def call(self, call: Call) -> CallOutcome:
        self.calls.append(call)
        return CallOutcome(call.label, "completed", 0, self.fingerprint(str(call.arg), call.env))


def lane_gate(lane: str = "same", env: Mapping[str, str] | None = None,
              subject_env: Mapping[str, str] | None = None) -> Gate:
    return Gate(id="lane", kind="lane-identity", title="lane", origin=Origin("t.yaml"), env=dict(env or {}),
                fingerprint="toy:fingerprint", control=LaneSide("eager"),
                subject=LaneSide("cpu-emulated", dict(subject_env or {})), expect=Expectation(lane=lane))  # type: ignore[arg-type]


def judge(fingerprint: Fingerprint, gate: Gate, arm: str = "cpu-emulated") -> tuple[ArmOutcome, Children]:
    children = Children(fingerprint)
    return judge_lane(gate, arm, children, Path("/tree"), 30.0), children  # type: ignore[arg-type]


def sides(control: Mapping[str, Any], subject: Mapping[str, Any]) -> Fingerprint:
    return lambda backend, env: dict(control if backend == "eager" else subject)


@dataclass(frozen=True)
class Row:
    control: Mapping[str, Any]
    subject: Mapping[str, Any]
    verdict: Verdict
    says: str
    lane: str = "same"


ROWS: dict[str, Row] = {
    "one-copy-in-a-thousand": Row({"copies": 1000}, {"copies": 1001}, Verdict.FAIL,
                                  "DIFFERENT-LANE: copies control=1000 subject=1001; values IDENTICAL"),
    "one-copy-in-a-thousand-is-the-different-lane-wanted": Row({"copies": 1000}, {"copies": 1001}, Verdict.PASS,
                                                               "DIFFERENT-LANE: copies control=1000 subject=1001",
                                                               lane="different"),
    "bytes-close-but-not-equal": Row({"bytes": 1.0}, {"bytes": 1.001}, Verdict.FAIL,
                                     "DIFFERENT-LANE: bytes control=1.0 subject=1.001"),
    "a-value-close-but-not-equal": Row({"copies": 4, "output": 0.5}, {"copies": 4, "output": 0.5001}, Verdict.FAIL,
                                       "SAME-LANE: copies control=4 subject=4; values DIFFER (output)"),
    "one-more-step": Row({"copies_per_step": [4, 4]}, {"copies_per_step": [4, 4, 5]}, Verdict.FAIL,
                         "DIFFERENT-LANE: copies_per_step control=[4, 4] subject=[4, 4, 5]"),
    "one-step-fewer": Row({"copies_per_step": [4, 4, 4]}, {"copies_per_step": [4, 4]}, Verdict.FAIL,
                          "DIFFERENT-LANE: copies_per_step control=[4, 4, 4] subject=[4, 4]"),
    "the-same-steps-in-another-order": Row({"launches_per_step": [1, 2]}, {"launches_per_step": [2, 1]},
                                           Verdict.FAIL, "DIFFERENT-LANE: launches_per_step control=[1, 2] "
                                                         "subject=[2, 1]"),
    "one-step-done-twice": Row({"kernels": ["mm", "add"]}, {"kernels": ["mm", "mm", "add"]}, Verdict.FAIL,
                               "DIFFERENT-LANE: kernels control=['mm', 'add'] subject=['mm', 'mm', 'add']"),
    "output-values-one-step-longer": Row({"copies": 4, "output": [1, 2]}, {"copies": 4, "output": [1, 2, 3]},
                                         Verdict.FAIL, "values DIFFER (output)"),
    "equal-lists-are-the-same-lane": Row({"copies_per_step": [4, 5], "output": [1, 2]},
                                         {"copies_per_step": [4, 5], "output": [1, 2]}, Verdict.PASS,
                                         "SAME-LANE: copies_per_step control=[4, 5] subject=[4, 5]; values IDENTICAL"),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_fingerprints_are_compared_exactly(name: str) -> None:
    row = ROWS[name]
    outcome, _ = judge(sides(row.control, row.subject), lane_gate(row.lane))
    assert outcome.verdict is row.verdict, outcome.message
    assert row.says in outcome.message, outcome.message


@pytest.mark.parametrize("where", ["gate", "subject", "both"])
def test_each_side_is_told_the_arm_being_judged_whatever_the_environment_says(where: str) -> None:
    stale = {"SEAM_ARMS": "cpu-emulated"}
    gate = lane_gate(env=stale if where in ("gate", "both") else None,
                     subject_env=stale if where in ("subject", "both") else None)
    outcome, children = judge(lambda backend, env: {"arm": env.get("SEAM_ARMS")}, gate, arm="cuda")
    assert [c.env["SEAM_ARMS"] for c in children.calls] == ["cuda", "cuda"]
    assert outcome.verdict is Verdict.PASS and outcome.arm == "cuda"
    assert outcome.message == "SAME-LANE: arm control='cuda' subject='cuda'; values IDENTICAL"
