"""An expected node id names exactly one case, on the arm being judged, in the counts as in the red set.

A gate that says ``nodeids: [tests/x.py::test_a]`` is about that one case: a red ``test_ab`` (same
prefix), a red ``test_a[1]`` (a parametrization of a bare name) or a red ``legacy/tests/x.py::test_a``
(same path suffix, another folder) is an extra red the user must be told about, never a case the
expectation quietly takes in. ``{arm}`` in a node id is the arm being judged wherever the expectation
is read, the counts included, and in every node id of the list, not only the first.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from harness.judge.evaluate import judge_red
from harness.gates.model import Counts, RedSet
from reports.outcome import CaseOutcome, RunOutcome, Verdict
from tests.reports.fixture_projects import gate

A = "tests/x.py::test_a"
B = "tests/x.py::test_b"
P = "tests/x.py::test_p"


def red(nodeid: str) -> CaseOutcome:
    return CaseOutcome(nodeid, "failed", "assert 1 == 2", assertions_passed=0, assertions_failed=1)


def green(nodeid: str) -> CaseOutcome:
    return CaseOutcome(nodeid, "passed", assertions_passed=1)


def ran(*cases: CaseOutcome) -> RunOutcome:
    return RunOutcome("mutation m cpu-emulated", "completed", 1, cases)


@dataclass(frozen=True)
class Row:
    run: RunOutcome
    nodeids: tuple[str, ...]
    verdict: Verdict
    says: tuple[str, ...] = ()
    counts: Counts | None = None
    arm: str = "cpu-emulated"


ROWS: dict[str, Row] = {
    # ---- a node id is not a prefix ----------------------------------------------------------
    "a-longer-name-with-the-same-prefix-is-an-extra-red": Row(
        ran(red(A), red("tests/x.py::test_ab"), green(B)), (A,), Verdict.FAIL,
        ("extra red: tests/x.py::test_ab",)),
    "a-parametrization-of-a-bare-name-is-not-that-name": Row(
        ran(red(f"{P}[1]"), red(f"{P}[2]"), green(B)), (P,), Verdict.FAIL,
        ("extra red: tests/x.py::test_p[1], tests/x.py::test_p[2]", "expected red but not run: tests/x.py::test_p")),
    "one-parametrization-named-the-other-red-is-extra": Row(
        ran(red(f"{P}[1]"), red(f"{P}[10]"), green(B)), (f"{P}[1]",), Verdict.FAIL,
        ("extra red: tests/x.py::test_p[10]",)),
    "a-same-named-file-in-another-folder-is-an-extra-red": Row(
        ran(red(A), red("legacy/tests/x.py::test_a"), green(B)), (A,), Verdict.FAIL,
        ("extra red: legacy/tests/x.py::test_a",)),
    "the-exact-names-alone-pass": Row(
        ran(red(A), green("tests/x.py::test_ab"), green("legacy/tests/x.py::test_a")), (A,), Verdict.PASS,
        ("reds exactly tests/x.py::test_a (1 case, 0 passed",)),
    # ---- {arm} is the judged arm everywhere ---------------------------------------------------
    "arm-in-the-counts-too": Row(
        ran(red(f"{P}[cuda]"), green(f"{P}[cpu-emulated]")), (f"{P}[{{arm}}]",), Verdict.PASS,
        ("reds exactly tests/x.py::test_p[cuda] (1 case, 0 passed",),
        counts=Counts(cases=1, passed=0, failed=1, assertions=1), arm="cuda"),
    "arm-in-the-counts-off-by-one-is-still-a-fail": Row(
        ran(red(f"{P}[cuda]"), green(f"{P}[cpu-emulated]")), (f"{P}[{{arm}}]",), Verdict.FAIL,
        ("cases: expected 2, got 1",), counts=Counts(cases=2), arm="cuda"),
    "arm-in-the-second-node-id": Row(
        ran(red(A), red(f"{P}[cuda]"), green(f"{P}[cpu-emulated]")), (A, f"{P}[{{arm}}]"), Verdict.PASS,
        ("reds exactly tests/x.py::test_a, tests/x.py::test_p[cuda] (2 cases",), arm="cuda"),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_an_expected_node_id_names_exactly_one_case_on_the_judged_arm(name: str) -> None:
    row = ROWS[name]
    g = gate("g", mutation="m", red=RedSet(nodeids=row.nodeids), counts=row.counts, arms=(row.arm,))
    outcome = judge_red(g, row.arm, row.run, what="mutation m")
    assert outcome.verdict is row.verdict, outcome.message
    for words in row.says:
        assert words in outcome.message, outcome.message
