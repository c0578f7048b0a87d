"""The lane-identity judge as a table: lanes that differ only in launches, only in values, or not at all.

The two sides' fingerprints come from a stand-in executor that answers each ``Call`` the way a
child process would (from the call's backend and environment), so every row is judged in
milliseconds; ``tests/harness/test_lane.py`` runs the same judge through real children.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import pytest

from harness.rows.executor import Call, CallOutcome
from harness.judge.lane import VALUE_KEYS, compare, judge_lane
from harness.gates.model import Expectation, Gate, LaneSide, Origin
from reports.outcome import Verdict

Fingerprint = Callable[[str, Mapping[str, str]], Any]


@dataclass
class StandIn:
    """An executor whose children answer ``fingerprint(backend, env)``; it records every call."""

    fingerprint: Fingerprint
    ends: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # role -> (end, detail)
    calls: list[Call] = field(default_factory=list)

    def call(self, call: Call) -> CallOutcome:
        self.calls.append(call)
        role = call.label.split()[1]
        end, detail = self.ends.get(role, ("completed", ""))
        if end != "completed":
            return CallOutcome(call.label, end, None, None, detail)
        return CallOutcome(call.label, "completed", 0, self.fingerprint(str(call.arg), call.env))


def lane_gate(lane: str | None = "same", env: Mapping[str, str] | None = None,
              subject_env: Mapping[str, str] | None = None) -> Gate:
    return Gate(id="lane", kind="lane-identity", title="draft lane", origin=Origin("t.yaml"), env=dict(env or {}),
                fingerprint="toy:fingerprint", control=LaneSide("eager"),
                subject=LaneSide("cpu-emulated", dict(subject_env or {"TOY_CUDAGRAPH": "0"})),
                expect=Expectation(lane=lane))  # type: ignore[arg-type]


def toy(copies_bug: bool = False, launches_bug: bool = False, values_bug: bool = False) -> Fingerprint:
    """A driver: a capture-capable backend with capture on takes the capture lane; bugs add work."""

    def fingerprint(backend: str, env: Mapping[str, str]) -> dict[str, Any]:
        capture = backend != "eager" and env.get("TOY_CUDAGRAPH", "1") != "0"
        subject = backend != "eager"
        return {"lane": "capture" if capture else "eager",
                "copies": 4 + (1 if copies_bug and subject else 0),
                "launches": 2 + (1 if launches_bug and subject else 0),
                "output_digest": "abc" + ("!" if values_bug and subject else "")}

    return fingerprint


@dataclass(frozen=True)
class Row:
    fingerprint: Fingerprint
    lane: str | None
    verdict: Verdict
    says: tuple[str, ...] = ()
    never: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    subject_env: Mapping[str, str] | None = None


ROWS: dict[str, Row] = {
    "same-lane-same-values": Row(toy(), "same", Verdict.PASS,
                                 ("SAME-LANE: copies control=4 subject=4, lane control='eager' subject='eager', "
                                  "launches control=2 subject=2; values IDENTICAL",), ("expected",)),
    "no-lane-named-means-same": Row(toy(), None, Verdict.PASS, ("SAME-LANE",)),
    "differs-only-in-copies": Row(toy(copies_bug=True), "same", Verdict.FAIL,
                                  ("DIFFERENT-LANE: copies control=4 subject=5; values IDENTICAL "
                                   "(expected SAME-LANE, values IDENTICAL)",)),
    "differs-only-in-launches": Row(toy(launches_bug=True), "same", Verdict.FAIL,
                                    ("DIFFERENT-LANE: launches control=2 subject=3; values IDENTICAL",)),
    "differs-only-in-values": Row(toy(values_bug=True), "same", Verdict.FAIL,
                                  ("SAME-LANE:", "values DIFFER (output_digest) (expected SAME-LANE, values IDENTICAL)",)),
    "differs-in-values-when-a-different-lane-is-wanted": Row(toy(copies_bug=True, values_bug=True), "different",
                                                             Verdict.FAIL, ("values DIFFER (output_digest)",
                                                                            "(expected DIFFERENT-LANE")),
    "different-lane-wanted-and-seen": Row(toy(launches_bug=True), "different", Verdict.PASS,
                                          ("DIFFERENT-LANE: launches control=2 subject=3; values IDENTICAL",),
                                          ("expected",)),
    "different-lane-wanted-but-same": Row(toy(), "different", Verdict.FAIL,
                                          ("SAME-LANE", "(expected DIFFERENT-LANE, values IDENTICAL)")),
    "the-subjects-switch-beats-the-gates": Row(toy(), "same", Verdict.PASS, ("SAME-LANE",),
                                               env={"TOY_CUDAGRAPH": "1"}),
    "the-gates-env-reaches-both-sides": Row(toy(), "same", Verdict.FAIL,
                                            ("DIFFERENT-LANE: lane control='eager' subject='capture'",),
                                            env={"TOY_CUDAGRAPH": "1"}, subject_env={"OTHER": "1"}),
    "a-key-only-one-side-has": Row(lambda b, e: {"copies": 4, **({"syncs": 1} if b != "eager" else {})}, "same",
                                   Verdict.FAIL, ("DIFFERENT-LANE: syncs control=None subject=1",)),
    "the-arm-is-told-to-both-sides": Row(lambda b, e: {"arm": e.get("SEAM_ARMS")}, "same", Verdict.PASS,
                                         ("arm control='cpu-emulated' subject='cpu-emulated'",)),
    "each-side-runs-its-own-backend": Row(lambda b, e: {"backend": b}, "different", Verdict.PASS,
                                          ("backend control='eager' subject='cpu-emulated'",)),
}


def judge(row_fingerprint: Fingerprint, gate: Gate, **ends: tuple[str, str]) -> tuple[Any, StandIn]:
    executor = StandIn(row_fingerprint, ends)
    return judge_lane(gate, "cpu-emulated", executor, Path("/tree"), 30.0), executor  # type: ignore[arg-type]


@pytest.mark.parametrize("name", list(ROWS))
def test_the_lane_judge_reads_each_row_as_the_user_must(name: str) -> None:
    row = ROWS[name]
    outcome, executor = judge(row.fingerprint, lane_gate(row.lane, row.env, row.subject_env))
    assert outcome.verdict is row.verdict, outcome.message
    for words in row.says:
        assert words in outcome.message, outcome.message
    for words in row.never:
        assert words not in outcome.message, outcome.message
    if row.verdict is Verdict.PASS:  # a pass says what was seen and nothing about an expectation
        assert outcome.message.endswith("values IDENTICAL"), outcome.message
    assert [c.label for c in executor.calls] == ["lane control eager", "lane subject cpu-emulated"]
    assert all(c.target == "toy:fingerprint" and c.tree == Path("/tree") and c.timeout == 30.0
               for c in executor.calls)
    assert (outcome.gate, outcome.arm, outcome.kind, outcome.title) == ("lane", "cpu-emulated", "lane-identity",
                                                                        "draft lane")


def test_the_json_facts_carry_both_fingerprints_and_both_findings() -> None:
    outcome, _ = judge(toy(values_bug=True), lane_gate())
    assert outcome.facts["control"]["output_digest"] == "abc" and outcome.facts["subject"]["output_digest"] == "abc!"
    assert outcome.facts["same_lane"] is True and outcome.facts["values_identical"] is False


SIDE_TROUBLE = {
    "control-times-out": ({"control": ("timeout", "no exit after 30 s")}, Verdict.TIMEOUT,
                          "lane control eager: no exit after 30 s"),
    "subject-times-out": ({"subject": ("timeout", "no exit after 30 s")}, Verdict.TIMEOUT,
                          "lane subject cpu-emulated: no exit after 30 s"),
    "control-crashes": ({"control": ("crash", "killed by SIGSEGV")}, Verdict.ERROR,
                        "lane control eager: the fingerprint callable failed: killed by SIGSEGV"),
    "subject-raises": ({"subject": ("error", "ValueError: boom")}, Verdict.ERROR,
                       "lane subject cpu-emulated: the fingerprint callable failed: ValueError: boom"),
}


@pytest.mark.parametrize("name", list(SIDE_TROUBLE))
def test_a_side_that_does_not_answer_is_never_judged_same_lane(name: str) -> None:
    ends, verdict, says = SIDE_TROUBLE[name]
    outcome, _ = judge(toy(), lane_gate(), **ends)
    assert outcome.verdict is verdict and outcome.message == says


@pytest.mark.parametrize("answer, type_name", [([4, 2], "list"), (None, "NoneType"), ("abc", "str")])
def test_a_fingerprint_that_is_not_a_mapping_is_an_error(answer: Any, type_name: str) -> None:
    outcome, _ = judge(lambda b, e: answer if b != "eager" else {"copies": 4}, lane_gate())
    assert outcome.verdict is Verdict.ERROR
    assert outcome.message == f"lane subject cpu-emulated: the fingerprint must be a mapping, got {type_name}"


@pytest.mark.parametrize("missing", ["fingerprint", "control", "subject"])
def test_a_lane_gate_without_its_parts_is_refused(missing: str) -> None:
    g = lane_gate()
    g = Gate(**{**g.__dict__, missing: None})
    with pytest.raises(ValueError, match="lane-identity gate needs fingerprint, control and subject"):
        judge(toy(), g)


@pytest.mark.parametrize("key", sorted(VALUE_KEYS))
def test_every_value_key_is_a_value_not_a_lane(key: str) -> None:
    result = compare({"copies": 4, key: "a"}, {"copies": 4, key: "b"})
    assert result.same_lane and not result.values_identical and result.value_diff == (key,)
    assert result.describe() == f"SAME-LANE: copies control=4 subject=4; values DIFFER ({key})"


def test_value_keys_are_exactly_the_four_output_names() -> None:
    assert VALUE_KEYS == {"output_digest", "values_digest", "logits_digest", "output"}


def test_two_differing_lane_keys_are_both_named_in_order() -> None:
    result = compare({"copies": 4, "launches": 2, "lane": "eager"}, {"copies": 5, "launches": 3, "lane": "eager"})
    assert result.lane_diff == ("copies", "launches")
    assert result.describe() == ("DIFFERENT-LANE: copies control=4 subject=5, launches control=2 subject=3; "
                                 "values IDENTICAL")


def test_two_differing_value_keys_are_both_named() -> None:
    result = compare({"output": 1, "logits_digest": "x"}, {"output": 2, "logits_digest": "y"})
    assert result.describe() == "SAME-LANE: ; values DIFFER (logits_digest, output)"


@pytest.mark.parametrize("answers, label, keys", [
    (({}, {}), "lane control eager", "nothing"),
    (({"output_digest": "abc"}, {"output_digest": "abc"}), "lane control eager", "['output_digest']"),
    (({"copies": 4, "output_digest": "abc"}, {"output_digest": "abc"}), "lane subject cpu-emulated",
     "['output_digest']"),
], ids=["both-empty", "values-only", "subject-values-only"])
def test_a_fingerprint_with_no_work_to_compare_is_an_error_never_a_pass(answers: tuple[dict, dict], label: str,
                                                                       keys: str) -> None:
    outcome, _ = judge(lambda b, e: answers[0] if b == "eager" else answers[1], lane_gate())
    assert outcome.verdict is Verdict.ERROR, outcome.message
    assert outcome.message == (f"{label}: the fingerprint holds no work key, only {keys}: a lane check with no "
                               "work to compare could never fail; return the work the side did (copies, launches, "
                               "lane) beside its output digest")
