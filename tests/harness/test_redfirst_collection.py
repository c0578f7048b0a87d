"""``collection_errors_are_red``: which collection errors of the old code become red cases, and which stay errors.

The end-to-end case (a two-commit repository, ``seamgate run``) is tests/realworld/test_redfirst_collection.py.
"""

from __future__ import annotations

from dataclasses import replace

from harness.gates.model import Counts, RedSet, SourceState
from harness.judge.redfirst import judge_red_first
from reports.outcome import CaseOutcome, RunOutcome, Verdict
from tests.reports.fixture_projects import gate

NEW, OLD = "tests/test_new.py", "tests/test_old.py"
A, B = f"{NEW}::test_a", f"{NEW}::test_b"
WHY = "collection failed: ImportError: cannot import name 'new_function' from 'pkg'"
OLD_REF = SourceState(kind="ref", ref="HEAD~1", overlay=(NEW,))


def the_gate(named: tuple[str, ...], red: RedSet = RedSet(files=(NEW,))):
    g = gate("rf", kind="red-first", select=(NEW,), source=OLD_REF, red=red,
             counts=Counts(cases=2, passed=0, failed=2), green_after=True)
    return replace(g, collection_errors_are_red=named)


RED = RunOutcome("old", "completed", 1, (CaseOutcome(NEW, "error", WHY),))
GREEN = RunOutcome("new", "completed", 0, (CaseOutcome(A, "passed"), CaseOutcome(B, "passed")))


def test_a_named_files_collection_error_is_one_red_case_per_case_the_working_tree_collects() -> None:
    outcome = judge_red_first(the_gate((NEW,)), "cpu-emulated", RED, GREEN)
    assert outcome.verdict is Verdict.PASS, outcome.message
    assert outcome.message.startswith("red-first against ref HEAD~1: reds exactly tests/test_new.py (2 cases, 0 passed, "
                                      "2 failed, assertions not counted), exit 1; 0 of 2 cases passing; 2 cases red "
                                      "by a collection error (collection_errors_are_red); green after"), outcome.message
    red_run, green_run = outcome.runs
    assert green_run is GREEN
    assert [(c.nodeid, c.kind, c.assertions_passed, c.assertions_failed) for c in red_run.cases] == \
        [(A, "failed", None, 0), (B, "failed", None, 0)]
    assert {c.message for c in red_run.cases} == {
        "collection error against ref HEAD~1, counted as red (collection_errors_are_red): ImportError: cannot "
        "import name 'new_function' from 'pkg'"}


def test_a_trailing_slash_and_other_errors_in_the_run_are_kept_apart() -> None:
    other = CaseOutcome("tests/test_other.py", "error", "collection failed: SyntaxError")
    sibling = CaseOutcome("tests/subway/test_y.py", "error", WHY)  # not below tests/sub/
    red = RunOutcome("old", "completed", 1, (CaseOutcome("tests/sub", "error", WHY), sibling, other))
    green = RunOutcome("new", "completed", 0, (CaseOutcome("tests/sub/test_x.py::test_a", "passed"),
                                               CaseOutcome("tests/subway/test_y.py::test_b", "passed")))
    g = replace(the_gate(("tests/sub/",), red=RedSet(count=1)), expect=replace(the_gate(()).expect, counts=None))
    outcome = judge_red_first(g, "cpu-emulated", red, green)
    red_run = outcome.runs[0]
    assert [(c.nodeid, c.kind) for c in red_run.cases] == [("tests/sub/test_x.py::test_a", "failed"),
                                                           ("tests/subway/test_y.py", "error"),
                                                           ("tests/test_other.py", "error")]
    assert outcome.verdict is Verdict.ERROR and "(and 1 more); an error, not a red" in outcome.message


def test_node_ids_can_be_expected_too_and_a_folder_names_the_files_below_it() -> None:
    outcome = judge_red_first(the_gate(("tests",), red=RedSet(nodeids=(A, B))), "cpu-emulated", RED, GREEN)
    assert outcome.verdict is Verdict.PASS, outcome.message


def test_without_the_key_or_for_another_file_the_collection_error_stays_an_error() -> None:
    for named in ((), (OLD,)):
        outcome = judge_red_first(the_gate(named), "cpu-emulated", RED, GREEN)
        assert outcome.verdict is Verdict.ERROR, outcome.message
        assert "an error, not a red" in outcome.message


def test_a_file_the_working_tree_cannot_collect_either_stays_an_error() -> None:
    broken_now = RunOutcome("new", "completed", 1, (CaseOutcome(NEW, "error", WHY),))
    outcome = judge_red_first(the_gate((NEW,)), "cpu-emulated", RED, broken_now)
    assert outcome.verdict is Verdict.ERROR, outcome.message
