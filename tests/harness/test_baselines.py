"""The baselines' flaky cases, as units (``harness/run/baselines.py``; end to end: tests/reliability, test_runner.py)."""

from __future__ import annotations

from harness.run.baselines import flaky_cases, flaky_lines, without_flaky
from reports.outcome import CaseOutcome, RunOutcome


def run(**kinds: str) -> RunOutcome:
    return RunOutcome("baseline", "completed", 0, tuple(CaseOutcome(f"t.py::{n}", k) for n, k in kinds.items()))


def test_a_case_red_in_one_baseline_run_and_not_the_other_is_flaky():
    first, second = run(a="passed", b="failed", c="error", d="skipped"), run(a="failed", b="error", c="passed", d="passed")
    assert flaky_cases(first, second) == {"t.py::a": ("passed", "failed"), "t.py::c": ("error", "passed")}


def test_flaky_cases_are_left_out_of_a_run_and_named_once_each():
    flaky = {"t.py::a": ("passed", "failed")}
    assert [c.nodeid for c in without_flaky(run(a="passed", b="passed"), flaky).cases] == ["t.py::b"]
    unchanged = run(b="passed")
    assert without_flaky(unchanged, flaky) is unchanged and without_flaky(unchanged, {}) is unchanged
    assert flaky_lines(flaky) == ["FLAKY baseline case t.py::a: passed, then failed in two baseline runs; not counted "
                                  "as red in any gate (fix the test, or leave it out of the gates' select)"]
