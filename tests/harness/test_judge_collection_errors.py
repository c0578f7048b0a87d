"""``collection_errors_are_red`` at its edges: what the judges sweep found unguarded.

The judges' CI sweep (``scripts/sweep_judges.py``) left these mutants of
``redfirst.collection_errors_as_red`` alive: a turned count that is 1 when nothing turned, a count
that keeps only the last file's cases, earlier cases dropped, and a named folder whose trailing
letters are stripped. Each test states what a user of a red-first gate sees.
"""

from __future__ import annotations

from dataclasses import replace

from harness.gates.model import RedSet, SourceState
from harness.judge.redfirst import judge_red_first
from reports.outcome import CaseOutcome, RunOutcome, Verdict
from tests.reports.fixture_projects import gate

NEW, NEW2, OLD = "tests/test_new.py", "tests/test_new2.py", "tests/test_old.py"
A, B, C, D = f"{NEW}::test_a", f"{NEW}::test_b", f"{NEW2}::test_c", f"{OLD}::test_d"
WHY = "collection failed: ImportError: cannot import name 'new_function' from 'pkg'"
REF = SourceState(kind="ref", ref="HEAD~1", overlay=(NEW, NEW2))


def red_first(named: tuple[str, ...], red: RedSet):
    g = gate("rf", kind="red-first", select=("tests",), source=REF, red=red, green_after=False)
    return replace(g, collection_errors_are_red=named)


def green(*ids: str) -> RunOutcome:
    return RunOutcome("new", "completed", 0, tuple(CaseOutcome(i, "passed") for i in ids))


def test_a_plain_red_first_pass_never_speaks_of_collection_errors() -> None:
    red = RunOutcome("old", "completed", 1, (CaseOutcome(A, "failed"), CaseOutcome(B, "failed")))
    for named in ((), (NEW,)):  # no key, or a named file whose cases simply fail
        outcome = judge_red_first(red_first(named, RedSet(files=(NEW,))), "cpu-emulated", red, green(A, B))
        assert outcome.verdict is Verdict.PASS, outcome.message
        assert "collection" not in outcome.message, outcome.message


def test_the_count_adds_the_cases_of_every_named_file_that_did_not_collect() -> None:
    red = RunOutcome("old", "completed", 1, (CaseOutcome(NEW, "error", WHY), CaseOutcome(NEW2, "error", WHY)))
    outcome = judge_red_first(red_first((NEW, NEW2), RedSet(files=(NEW, NEW2))), "cpu-emulated", red, green(A, B, C))
    assert outcome.verdict is Verdict.PASS, outcome.message
    assert "; 3 cases red by a collection error (collection_errors_are_red)" in outcome.message


def test_cases_before_the_collection_error_are_kept_in_the_red_run() -> None:
    red = RunOutcome("old", "completed", 1, (CaseOutcome(D, "failed"), CaseOutcome(NEW, "error", WHY)))
    outcome = judge_red_first(red_first((NEW,), RedSet(files=(NEW, OLD))), "cpu-emulated", red, green(D, A, B))
    assert [(c.nodeid, c.kind) for c in outcome.runs[0].cases] == [(D, "failed"), (A, "failed"), (B, "failed")]
    assert outcome.verdict is Verdict.PASS, outcome.message


def test_a_named_folder_ending_in_x_does_not_take_in_its_parents_other_files() -> None:
    other = "tests/test_other.py"
    red = RunOutcome("old", "completed", 1, (CaseOutcome(other, "error", WHY),))
    outcome = judge_red_first(red_first(("tests/X",), RedSet(count=1)), "cpu-emulated", red,
                              green(f"{other}::test_o"))
    assert [(c.nodeid, c.kind) for c in outcome.runs[0].cases] == [(other, "error")]
    assert outcome.verdict is Verdict.ERROR, outcome.message
