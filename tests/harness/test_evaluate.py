"""Evaluation: exact red sets, exact counts, errors are not reds, one exit code per report."""

from __future__ import annotations

from harness.judge.evaluate import judge_red
from harness.gates.model import Counts, RedSet
from reports.outcome import ArmOutcome, CaseOutcome, RunOutcome, Verdict
from tests.reports.fixture_projects import gate


def case(nodeid: str, kind: str = "passed", failed: int = 0, passed: int = 1, message: str = "") -> CaseOutcome:
    return CaseOutcome(nodeid, kind, message, assertions_passed=passed, assertions_failed=failed)  # type: ignore[arg-type]


def run(*cases: CaseOutcome, end: str = "completed", exit_code: int | None = 1, detail: str = "") -> RunOutcome:
    return RunOutcome("m", end, exit_code, cases, detail=detail)  # type: ignore[arg-type]


A, B, C = "tests/x.py::test_a", "tests/x.py::test_b", "tests/y.py::test_c"


def judge(observed: RunOutcome, **kw) -> ArmOutcome:
    return judge_red(gate("g", mutation="m", **kw), "cpu-emulated", observed, what="mutation m")


def test_a_mutation_that_reds_exactly_the_expected_case_passes():
    outcome = judge(run(case(A, "failed", 1), case(B), case(C)), red=RedSet(nodeids=(A,)))
    assert outcome.verdict is Verdict.PASS
    assert "2 of 3 cases passing" in outcome.message


def test_one_extra_red_case_fails_the_gate_and_is_named():
    outcome = judge(run(case(A, "failed", 1), case(B, "failed", 1), case(C)), red=RedSet(nodeids=(A,)))
    assert outcome.verdict is Verdict.FAIL and "extra red: tests/x.py::test_b" in outcome.message


def test_an_expected_red_case_that_stayed_green_fails_the_gate_and_is_named():
    outcome = judge(run(case(A), case(B), case(C), exit_code=0), red=RedSet(nodeids=(A,)))
    assert outcome.verdict is Verdict.FAIL and "expected red but green: tests/x.py::test_a" in outcome.message


def test_a_files_expectation_needs_every_case_of_the_file_red_and_none_outside():
    whole = judge(run(case(A, "failed", 1), case(B, "failed", 1), case(C)), red=RedSet(files=("tests/x.py",)))
    half = judge(run(case(A, "failed", 1), case(B), case(C)), red=RedSet(files=("tests/x.py",)))
    assert whole.verdict is Verdict.PASS
    assert half.verdict is Verdict.FAIL and "expected red but green: tests/x.py::test_b" in half.message


def test_a_count_expectation_is_exact():
    assert judge(run(case(A, "failed", 1), case(B)), red=RedSet(count=1)).verdict is Verdict.PASS
    outcome = judge(run(case(A, "failed", 1), case(B, "failed", 1)), red=RedSet(count=1))
    assert outcome.verdict is Verdict.FAIL and "expected exactly 1 red, got 2" in outcome.message


def test_counts_are_exact_over_the_red_part():
    observed = run(case(A, "failed", 1, passed=4), case(B, "failed", 1, passed=2), case(C))
    ok = judge(observed, red=RedSet(files=("tests/x.py",)), counts=Counts(cases=2, passed=0, failed=2, assertions=2))
    bad = judge(observed, red=RedSet(files=("tests/x.py",)), counts=Counts(cases=3, assertions=7))
    assert ok.verdict is Verdict.PASS
    assert bad.verdict is Verdict.FAIL and "cases: expected 3, got 2" in bad.message and "assertions: expected 7, got 2" in bad.message


def test_a_broken_import_is_an_error_never_a_red():
    observed = run(case("tests/x.py", "error", passed=0, message="collection failure"), exit_code=2)
    outcome = judge(observed, red=RedSet(files=("tests/x.py",)))
    assert outcome.verdict is Verdict.ERROR and "an error, not a red" in outcome.message


def test_pytest_exit_codes_that_judge_nothing_are_errors():
    assert judge(run(exit_code=5), red=RedSet(count=0)).verdict is Verdict.ERROR


def test_timeouts_and_crashes_keep_their_own_verdicts():
    assert judge(run(end="timeout", exit_code=None, detail="no exit"), red=RedSet(count=1)).verdict is Verdict.TIMEOUT
    assert judge(run(end="crash", exit_code=None, detail="killed by SIGSEGV"), red=RedSet(count=1)).verdict is Verdict.CRASH


def test_an_owed_case_is_never_green():
    observed = run(case(A, "failed", 1), case(B, "owed", passed=0, message="OWED: cuda arm needs a GPU"))
    outcome = judge(observed, red=RedSet(nodeids=(A,)))
    assert outcome.verdict is Verdict.OWED and "OWED: cuda arm" in outcome.message


def test_an_expected_node_id_names_the_arms_parametrization_with_an_arm_placeholder():
    P = "tests/x.py::test_p[{arm}]"
    observed = run(case("tests/x.py::test_p[cpu-emulated]", "failed", 1), case(B))
    assert judge(observed, red=RedSet(nodeids=(P,))).verdict is Verdict.PASS
    other_arm = judge_red(gate("g", mutation="m", red=RedSet(nodeids=(P,))), "cuda", observed, what="mutation m")
    assert other_arm.verdict is Verdict.FAIL and "tests/x.py::test_p[cuda]" in other_arm.message
