"""The red-set judge as a table: the inputs that must read PASS, FAIL, ERROR, TIMEOUT, CRASH and OWED.

Each row is one observed run and one expectation, with the verdict a user must see and words the
message must carry. The rows sit on the edges a defect in ``harness/judge/evaluate.py`` would blur: skipped,
xfailed and xpassed cases, setup and teardown errors, OWED skips, one extra red, one missing red,
counts off by one, a file prefix that is not a folder, and the exit code a report maps to.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from harness.judge.evaluate import error_outcome, judge_red, owed_outcome, red_of_baseline, red_set_problems
from harness.gates.model import Counts, Expectation, RedSet
from reports.outcome import CaseOutcome, RunOutcome, Verdict
from tests.reports.fixture_projects import gate

A, B, C = "tests/x.py::test_a", "tests/x.py::test_b", "tests/y.py::test_c"
D = "tests/sub/z.py::test_d"
NEAR = "tests/subway.py::test_near"  # shares the prefix "tests/sub" but is not in the folder
OWED_MSG = "OWED: cuda arm needs a GPU"


def c(nodeid: str, kind: str = "passed", *, failed: int = 0, passed: int = 1, message: str = "") -> CaseOutcome:
    if kind == "failed" and failed == 0:
        failed = 1
    return CaseOutcome(nodeid, kind, message, assertions_passed=passed, assertions_failed=failed)  # type: ignore[arg-type]


def observed(*cases: CaseOutcome, exit_code: int | None = 1, end: str = "completed", detail: str = "") -> RunOutcome:
    return RunOutcome("mutation m cpu-emulated", end, exit_code, cases, detail=detail, log="/tmp/log.txt")  # type: ignore[arg-type]


@dataclass(frozen=True)
class Row:
    """One judged run: what was observed, what the gate expected, what the user must read."""

    run: RunOutcome
    red: RedSet
    verdict: Verdict
    #: Words the message must contain.
    says: tuple[str, ...] = ()
    #: Words the message must NOT contain.
    never: tuple[str, ...] = ()
    counts: Counts | None = None
    arm: str = "cpu-emulated"


ROWS: dict[str, Row] = {
    # ---- PASS: exactly the expected reds ---------------------------------------------------
    "nodeids-exact": Row(observed(c(A, "failed"), c(B), c(C)), RedSet(nodeids=(A,)), Verdict.PASS,
                         ("mutation m: reds exactly tests/x.py::test_a", "1 case, 0 passed", "exit 1",
                          "2 of 3 cases passing")),
    "files-exact": Row(observed(c(A, "failed"), c(B, "failed"), c(C)), RedSet(files=("tests/x.py",)), Verdict.PASS,
                       ("reds exactly tests/x.py (2 cases, 0 passed", "1 of 3 cases passing")),
    "folder-with-slash": Row(observed(c(D, "failed"), c(NEAR), c(A)), RedSet(files=("tests/sub/",)), Verdict.PASS,
                             ("reds exactly tests/sub/",)),
    "folder-without-slash-is-not-a-prefix": Row(observed(c(D, "failed"), c(NEAR), c(A)), RedSet(files=("tests/sub",)),
                                                Verdict.PASS),
    "count-zero-all-green": Row(observed(c(A), c(B), exit_code=0), RedSet(count=0), Verdict.PASS,
                                ("all green (2 cases, 2 passed, 2 assertions, 0 failed), exit 0",)),
    "count-exact": Row(observed(c(A, "failed"), c(B, "failed"), c(C)), RedSet(count=2), Verdict.PASS,
                       ("reds exactly 2 case(s)",)),
    "skips-xfail-xpass-outside-are-not-red": Row(
        observed(c(A, "failed"), c(B, "skipped"), c(C, "xfailed", failed=1), c(D, "xpassed")),
        RedSet(nodeids=(A,)), Verdict.PASS, ("0 of 4 cases passing",)),
    "counts-exact-files": Row(observed(c(A, "failed", passed=4), c(B, "failed", passed=2), c(C)),
                              RedSet(files=("tests/x.py",)), Verdict.PASS,
                              counts=Counts(cases=2, passed=0, failed=2, assertions=2)),
    "counts-exact-count-mode": Row(observed(c(A, "failed", failed=3), c(B), c(C)), RedSet(count=1), Verdict.PASS,
                                   counts=Counts(cases=1, passed=0, failed=1, assertions=3)),
    "counts-are-over-the-named-part-not-the-reds": Row(observed(c(A, "failed"), c(B), c(C)),
                                                       RedSet(nodeids=(A, B)), Verdict.FAIL,
                                                       ("expected red but green: tests/x.py::test_b",),
                                                       ("cases:", "passed:", "failed:", "assertions:"),
                                                       counts=Counts(cases=2, passed=1, failed=1, assertions=1)),
    "assertions-sum-only-red-cases": Row(observed(c(A, "failed", failed=2), c(B, "xfailed", failed=1), c(C)),
                                         RedSet(nodeids=(A,)), Verdict.PASS, counts=Counts(assertions=2)),
    "assertions-of-a-green-case-in-the-file-are-not-counted": Row(
        observed(c(A, "failed", failed=2), c(B, "xfailed", failed=1), c(C)), RedSet(files=("tests/x.py",)),
        Verdict.FAIL, ("expected red but green: tests/x.py::test_b",), ("assertions:",), counts=Counts(assertions=2)),
    "arm-placeholder": Row(observed(c("tests/x.py::test_p[cpu-emulated]", "failed"), c(B)),
                           RedSet(nodeids=("tests/x.py::test_p[{arm}]",)), Verdict.PASS,
                           ("tests/x.py::test_p[cpu-emulated]",)),
    # ---- FAIL: one extra, one missing, counts off by one -----------------------------------
    "extra-red": Row(observed(c(A, "failed"), c(B, "failed"), c(C)), RedSet(nodeids=(A,)), Verdict.FAIL,
                     ("extra red: tests/x.py::test_b",), ("expected red but green",)),
    "extra-red-outside-files": Row(observed(c(A, "failed"), c(B, "failed"), c(C, "failed")),
                                   RedSet(files=("tests/x.py",)), Verdict.FAIL, ("extra red: tests/y.py::test_c",)),
    "missing-red": Row(observed(c(A), c(B), c(C), exit_code=0), RedSet(nodeids=(A,)), Verdict.FAIL,
                       ("expected red but green: tests/x.py::test_a",), ("extra red",)),
    "missing-red-in-file": Row(observed(c(A, "failed"), c(B), c(C)), RedSet(files=("tests/x.py",)), Verdict.FAIL,
                               ("expected red but green: tests/x.py::test_b",)),
    "expected-red-but-skipped": Row(observed(c(A, "skipped"), c(B)), RedSet(nodeids=(A,)), Verdict.FAIL,
                                    ("expected red but green: tests/x.py::test_a",)),
    "expected-red-but-xfailed": Row(observed(c(A, "xfailed", failed=1), c(B)), RedSet(nodeids=(A,)), Verdict.FAIL,
                                    ("expected red but green: tests/x.py::test_a",)),
    "expected-red-but-xpassed": Row(observed(c(A, "xpassed"), c(B)), RedSet(nodeids=(A,)), Verdict.FAIL,
                                    ("expected red but green: tests/x.py::test_a",)),
    "expected-red-not-run": Row(observed(c(B), c(C), exit_code=0), RedSet(nodeids=(A,)), Verdict.FAIL,
                                ("expected red but not run: tests/x.py::test_a",), ("but green",)),
    "expected-file-not-run": Row(observed(c(A, "failed"), c(B, "failed")), RedSet(files=("tests/x.py", "tests/q.py")),
                                 Verdict.FAIL, ("no case of tests/q.py ran",)),
    "folder-prefix-is-not-the-folder": Row(observed(c(D, "failed"), c(NEAR, "failed")), RedSet(files=("tests/sub",)),
                                           Verdict.FAIL, ("extra red: tests/subway.py::test_near",)),
    "two-extra-reds-listed": Row(observed(c(A, "failed"), c(B, "failed"), c(C, "failed")), RedSet(nodeids=(A,)),
                                 Verdict.FAIL, ("mutation m: extra red: tests/x.py::test_b, tests/y.py::test_c",)),
    "two-greens-listed": Row(observed(c(A), c(B), c(C, "failed")), RedSet(nodeids=(A, B, C)), Verdict.FAIL,
                             ("expected red but green: tests/x.py::test_a, tests/x.py::test_b",)),
    "two-not-run-listed": Row(observed(c(C, "failed")), RedSet(nodeids=(A, B, C)), Verdict.FAIL,
                              ("expected red but not run: tests/x.py::test_a, tests/x.py::test_b",)),
    "two-problems-joined": Row(observed(c(A), c(B, "failed")), RedSet(nodeids=(A,)), Verdict.FAIL,
                               ("mutation m: extra red: tests/x.py::test_b; expected red but green: tests/x.py::test_a",)),
    "problems-and-counts-joined": Row(observed(c(A, "failed"), c(B, "failed")), RedSet(nodeids=(A,)), Verdict.FAIL,
                                      ("extra red: tests/x.py::test_b; cases: expected 2, got 1",),
                                      counts=Counts(cases=2)),
    "a-folder-whose-name-ends-in-capitals": Row(observed(c("tests/unitX/a.py::t", "failed"), c(A)),
                                                RedSet(files=("tests/unitX/",)), Verdict.PASS),
    "two-files-named-in-the-pass": Row(observed(c(A, "failed"), c(B, "failed"), c(C, "failed"), c(D)),
                                       RedSet(files=("tests/x.py", "tests/y.py")), Verdict.PASS,
                                       ("reds exactly tests/x.py, tests/y.py (3 cases",)),
    "count-one-too-many": Row(observed(c(A, "failed"), c(B, "failed"), c(C)), RedSet(count=1), Verdict.FAIL,
                              ("expected exactly 1 red, got 2: tests/x.py::test_a, tests/x.py::test_b",)),
    "count-one-too-few": Row(observed(c(A, "failed"), c(B), c(C)), RedSet(count=2), Verdict.FAIL,
                             ("expected exactly 2 red, got 1: tests/x.py::test_a",)),
    "count-zero-but-one-red": Row(observed(c(A, "failed"), c(B)), RedSet(count=0), Verdict.FAIL,
                                  ("expected exactly 0 red, got 1",)),
    "count-one-but-none-red": Row(observed(c(A), c(B), exit_code=0), RedSet(count=1), Verdict.FAIL,
                                  ("expected exactly 1 red, got 0: none",)),
    "counts-cases-off-by-one": Row(observed(c(A, "failed"), c(B, "failed"), c(C)), RedSet(files=("tests/x.py",)),
                                   Verdict.FAIL, ("cases: expected 3, got 2",), ("passed:", "failed:", "assertions:"),
                                   counts=Counts(cases=3, passed=0, failed=2, assertions=2)),
    "counts-passed-off-by-one": Row(observed(c(A, "failed"), c(B, "failed"), c(C)), RedSet(files=("tests/x.py",)),
                                    Verdict.FAIL, ("passed: expected 1, got 0",), ("cases:",),
                                    counts=Counts(cases=2, passed=1)),
    "counts-failed-off-by-one": Row(observed(c(A, "failed"), c(B, "failed"), c(C)), RedSet(files=("tests/x.py",)),
                                    Verdict.FAIL, ("failed: expected 1, got 2",), counts=Counts(failed=1)),
    "counts-assertions-off-by-one": Row(observed(c(A, "failed", failed=2), c(B, "failed"), c(C)),
                                        RedSet(files=("tests/x.py",)), Verdict.FAIL,
                                        ("assertions: expected 4, got 3",), counts=Counts(assertions=4)),
    "counts-passed-ignores-xpassed": Row(observed(c(A, "failed"), c(B, "xpassed")), RedSet(files=("tests/x.py",)),
                                         Verdict.FAIL, ("passed: expected 1, got 0",), counts=Counts(passed=1)),
    "counts-cases-in-count-mode-are-the-reds": Row(observed(c(A, "failed"), c(B), c(C)), RedSet(count=1),
                                                   Verdict.FAIL, ("cases: expected 3, got 1",),
                                                   counts=Counts(cases=3)),
    "fail-beats-owed": Row(observed(c(A, "failed"), c(B, "failed"), c(C, "owed", passed=0, message=OWED_MSG)),
                           RedSet(nodeids=(A,)), Verdict.FAIL, ("extra red: tests/x.py::test_b",)),
    "other-arm-placeholder": Row(observed(c("tests/x.py::test_p[cpu-emulated]", "failed"), c(B)),
                                 RedSet(nodeids=("tests/x.py::test_p[{arm}]",)), Verdict.FAIL,
                                 ("tests/x.py::test_p[cuda]", "extra red: tests/x.py::test_p[cpu-emulated]"),
                                 arm="cuda"),
    # ---- ERROR / TIMEOUT / CRASH: the run cannot be judged ---------------------------------
    "collection-error": Row(observed(c("tests/x.py", "error", passed=0, message="ImportError: no module\nmore"),
                                     exit_code=2), RedSet(files=("tests/x.py",)), Verdict.ERROR,
                            ("mutation m broke import/collection/setup: tests/x.py: ImportError: no module",
                             "an error, not a red"), ("(and", "more\n")),
    "a-session-level-error-names-the-session": Row(observed(c("", "error", passed=0, message="conftest exploded")),
                                                   RedSet(count=0), Verdict.ERROR,
                                                   ("mutation m broke import/collection/setup: the session: "
                                                    "conftest exploded; an error, not a red",)),
    "one-error-says-nothing-more": Row(observed(c(A, "error", passed=0, message="E1")), RedSet(nodeids=(A,)),
                                       Verdict.ERROR, ("tests/x.py::test_a: E1; an error, not a red",)),
    "an-error-without-a-message": Row(observed(c(A, "error", passed=0, message="  \n ")), RedSet(nodeids=(A,)),
                                      Verdict.ERROR, ("tests/x.py::test_a: ; an error, not a red",)),
    "a-long-error-line-is-cut-at-200": Row(observed(c(A, "error", passed=0, message="E" * 300)), RedSet(nodeids=(A,)),
                                           Verdict.ERROR, ("tests/x.py::test_a: " + "E" * 200 + "; an error",)),
    "two-errors-say-one-more": Row(observed(c(A, "error", passed=0, message="E1"), c(B, "error", passed=0, message="E2"),
                                            exit_code=1), RedSet(nodeids=(A,)), Verdict.ERROR,
                                   ("tests/x.py::test_a: E1 (and 1 more)",)),
    "setup-error-on-expected-case": Row(observed(c(A, "error", passed=0, message="fixture 'db' failed in setup"), c(B)),
                                        RedSet(nodeids=(A,)), Verdict.ERROR, ("fixture 'db' failed in setup",)),
    "teardown-error-beside-the-red": Row(observed(c(A, "failed"), c(B, "error", passed=0, message="teardown boom")),
                                         RedSet(nodeids=(A,)), Verdict.ERROR, ("tests/x.py::test_b: teardown boom",)),
    "exit-2-interrupted": Row(observed(c(A, "failed"), exit_code=2), RedSet(nodeids=(A,)), Verdict.ERROR,
                              ("errors during collection", "(exit 2); see /tmp/log.txt")),
    "exit-3-internal": Row(observed(c(A, "failed"), exit_code=3), RedSet(nodeids=(A,)), Verdict.ERROR,
                           ("internal error", "(exit 3)")),
    "exit-4-usage": Row(observed(exit_code=4), RedSet(count=0), Verdict.ERROR, ("usage error", "(exit 4)")),
    "exit-5-no-tests": Row(observed(exit_code=5), RedSet(count=0), Verdict.ERROR, ("collected no tests", "(exit 5)")),
    "exit-1-is-a-judged-red-run": Row(observed(c(A, "failed"), exit_code=1), RedSet(nodeids=(A,)), Verdict.PASS),
    "exit-0-is-a-judged-green-run": Row(observed(c(A), exit_code=0), RedSet(count=0), Verdict.PASS),
    "timeout": Row(observed(c(A, "failed"), c(B, "error", passed=0), end="timeout", exit_code=None,
                            detail="no exit after 10.0 s"), RedSet(nodeids=(A,)), Verdict.TIMEOUT,
                   ("mutation m: no exit after 10.0 s",)),
    "crash": Row(observed(c(A, "failed"), end="crash", exit_code=None, detail="killed by SIGSEGV"),
                 RedSet(nodeids=(A,)), Verdict.CRASH, ("mutation m: crashed (killed by SIGSEGV)",)),
    # ---- OWED: a case not measured is never green ------------------------------------------
    "owed-beside-exact-reds": Row(observed(c(A, "failed"), c(B, "owed", passed=0, message=OWED_MSG)),
                                  RedSet(nodeids=(A,)), Verdict.OWED,
                                  ("1 case(s) not measured: OWED: cuda arm needs a GPU",)),
    "expected-red-owed-is-owed-not-green": Row(observed(c(A, "owed", passed=0, message=OWED_MSG), c(B)),
                                               RedSet(nodeids=(A,)), Verdict.OWED, ("not measured",),
                                               ("but green",)),
    "two-owed-counted": Row(observed(c(A, "owed", passed=0, message=OWED_MSG), c(B, "owed", passed=0, message=OWED_MSG),
                                     exit_code=0), RedSet(count=0), Verdict.OWED, ("2 case(s) not measured",)),
    "plain-skip-is-not-owed": Row(observed(c(A, "skipped", message="needs linux"), exit_code=0), RedSet(count=0),
                                  Verdict.PASS, ("all green",)),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_the_red_set_judge_reads_each_row_as_the_user_must(name: str) -> None:
    row = ROWS[name]
    g = gate("g", mutation="m", red=row.red, counts=row.counts)
    outcome = judge_red(g, row.arm, row.run, what="mutation m")
    assert outcome.verdict is row.verdict, outcome.message
    for words in row.says:
        assert words in outcome.message, outcome.message
    for words in row.never:
        assert words not in outcome.message, outcome.message
    assert outcome.gate == "g" and outcome.arm == row.arm and outcome.runs == (row.run,)
    assert outcome.kind == "rule" and outcome.title == "g"  # what the reports print beside the verdict


def test_a_green_hint_follows_the_expected_red_that_stayed_green() -> None:
    outcome = judge_red(gate("g", red=RedSet(nodeids=(A,))), "cpu-emulated", observed(c(A), exit_code=0),
                        what="red-first", green_hint=" (HINT)")
    assert outcome.verdict is Verdict.FAIL and "expected red but green (HINT): tests/x.py::test_a" in outcome.message


def test_red_set_problems_names_a_green_case_without_a_hint_by_default() -> None:
    problems = red_set_problems(Expectation(red=RedSet(nodeids=(A,))), observed(c(A), exit_code=0))
    assert problems == ["expected red but green: tests/x.py::test_a"]


# ---- which cases make a baseline red ------------------------------------------------------
BASELINE_ROWS = {
    "failed": ("failed", True), "error": ("error", True), "passed": ("passed", False),
    "skipped": ("skipped", False), "owed": ("owed", False), "xfailed": ("xfailed", False),
    "xpassed": ("xpassed", False),
}


@pytest.mark.parametrize("name", list(BASELINE_ROWS))
def test_a_baseline_is_red_on_failures_and_errors_only(name: str) -> None:
    kind, red = BASELINE_ROWS[name]
    run = observed(c(B), c(A, kind, passed=0, message=OWED_MSG if kind == "owed" else ""))
    assert [x.nodeid for x in red_of_baseline(run)] == ([A] if red else [])


# ---- OWED arms ---------------------------------------------------------------------------
def test_an_owed_arm_says_owed_once_with_its_reason() -> None:
    plain = owed_outcome(gate("g"), "cuda", "cuda arm needs a GPU")
    prefixed = owed_outcome(gate("g"), "cuda", "OWED: cuda arm needs a GPU")
    assert plain.verdict is Verdict.OWED and prefixed.verdict is Verdict.OWED
    assert plain.message == prefixed.message == "OWED: cuda arm needs a GPU"
    assert plain.arm == "cuda" and plain.runs == ()
    assert (plain.gate, plain.kind, plain.title) == ("g", "rule", "g")


def test_an_error_arm_keeps_the_gate_the_arm_and_the_message() -> None:
    outcome = error_outcome(gate("g"), "cuda", "mutation m no longer applies")
    assert outcome.verdict is Verdict.ERROR and outcome.message == "mutation m no longer applies"
    assert (outcome.gate, outcome.arm, outcome.kind, outcome.title) == ("g", "cuda", "rule", "g")
