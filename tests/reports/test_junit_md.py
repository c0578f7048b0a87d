"""The JUnit and Markdown renderers case by case: red baselines, folds, the ledger's grouping, appending.

Written after a sweep of reports/junit_out.py and reports/markdown_out.py against the format tests left
66 of 502 mutants alive (the recorded result has no red baseline, few failures, no empty scope). With
this file: 497 of 502, then the mutant's rounded time; the other four are equivalent (``utf-8`` spelt
``UTF-8``, or left to the default of a UTF-8 locale). Command: ``seamgate sweep reports/junit_out.py
reports/markdown_out.py --tests tests/reports/test_junit_md.py --tests tests/reports/test_report_formats.py
--tests tests/reports/test_reports.py --output /tmp/sw``.
"""

from __future__ import annotations

from pathlib import Path

from junitparser import Error, JUnitXml, Skipped

from reports.junit_out import junit_text, report_to_junit
from reports.markdown_out import _cut, append, report_to_markdown, write_markdown
from reports.mutants import MutantOutcome, SweepResult
from reports.outcome import ArmOutcome, CaseOutcome, Report, RunOutcome, Verdict

RED = RunOutcome("baseline cpu-emulated tests", "crash", None,
                 (CaseOutcome("t::a", "failed"), CaseOutcome("t::b", "passed"), CaseOutcome("t::c", "error")),
                 wall=1.23456, detail="signal 9", log="runs/0002/stderr.txt")
SWEEP = SweepResult(scope=("a.py", "b.py"), mutants=(
    MutantOutcome("m1", "a.py", 3, status="equivalent", wall=0.12345),
    MutantOutcome("m2", "a.py", 4, status="equivalent", reason="same")))


def cases(xml: JUnitXml) -> dict:
    return {suite.name: list(suite) for suite in xml}


def test_a_red_baseline_is_an_error_case_naming_only_its_red_cases_with_the_run_as_detail():
    suite = cases(report_to_junit(Report(baseline_red=(RED,))))["seamgate"]
    case = suite[0]
    assert (case.name, case.classname, case.time) == ("baseline baseline cpu-emulated tests", "seamgate.baseline", 1.235)
    error = case.result[0]
    assert isinstance(error, Error) and error.type == "BaselineRed" and error.message == "baseline red: t::a, t::c"
    assert error.text == ("baseline cpu-emulated tests: 3 cases, 1 passed, 0 assertions, 0 failed, exit None (signal 9)\n"
                          "  red: t::a, t::c\n  log: runs/0002/stderr.txt\n")


def test_suites_are_the_gates_the_sweep_or_both():
    gate = Report(outcomes=(ArmOutcome("g", "cpu-emulated", Verdict.PASS),))
    assert list(cases(report_to_junit(gate))) == ["seamgate"]
    assert list(cases(report_to_junit(Report(), SWEEP))) == ["seamgate.sweep"]
    assert list(cases(report_to_junit(gate, SWEEP))) == ["seamgate", "seamgate.sweep"]
    assert list(cases(report_to_junit(Report(baseline_red=(RED,)), SWEEP))) == ["seamgate", "seamgate.sweep"]
    assert list(cases(report_to_junit(Report()))) == ["seamgate"]  # nothing at all: an empty gate suite


def test_a_gate_without_a_kind_is_classed_as_a_gate_and_its_time_is_its_runs():
    runs = (RunOutcome("r1", "completed", 0, wall=1.00041), RunOutcome("r2", "completed", 0, wall=2.0))
    case = cases(report_to_junit(Report(outcomes=(ArmOutcome("g", "a", Verdict.PASS, runs=runs),))))["seamgate"][0]
    assert case.classname == "seamgate.gate" and case.time == 3.0


def test_an_equivalent_mutant_without_a_reason_says_so():
    suite = cases(report_to_junit(Report(), SWEEP))["seamgate.sweep"]
    skipped = [case.result[0] for case in suite]
    assert all(isinstance(s, Skipped) for s in skipped)
    assert [s.message for s in skipped] == ["equivalent: no reason given", "equivalent: same"]
    assert suite[0].time == 0.123


def test_the_junit_text_is_the_declaration_then_the_document():
    text = junit_text(Report())
    assert text.startswith('<?xml version="1.0" encoding="utf-8"?>\n<testsuites') and text.endswith("</testsuites>\n")


def test_a_cut_keeps_text_up_to_its_limit_and_ends_a_longer_one_with_an_ellipsis():
    assert _cut("abcde", 5) == "abcde"
    assert _cut("abc def", 5) == "abc…"  # the cut never leaves a space before the ellipsis
    assert _cut("  a\n b  ", 10) == "a b"


def _failures(n: int) -> Report:
    return Report(outcomes=tuple(ArmOutcome(f"g{i}", "cpu-emulated", Verdict.FAIL, "extra red") for i in range(n)))


def test_ten_failures_are_all_listed_and_the_eleventh_is_folded():
    assert "more failures" not in report_to_markdown(_failures(10), "GATE_FAILED")
    text = report_to_markdown(_failures(11), "GATE_FAILED")
    assert "<summary>1 more failures</summary>" in text and text.index("`g9`") < text.index("1 more failures") < text.index("`g10`")


def test_the_ledger_shows_owed_alone_stale_alone_and_names_six_arms_then_counts_the_rest():
    def ledger(*verdicts: Verdict) -> str:
        report = Report(outcomes=tuple(ArmOutcome(f"g{i}", "cuda", v, f"{v.value}: needs a GPU") for i, v in enumerate(verdicts)))
        return report_to_markdown(report, "OK")

    assert "### Owed (0 OWED, 1 STALE)" in ledger(Verdict.STALE) and "1 STALE: measured on code" in ledger(Verdict.STALE)
    only_owed = ledger(*[Verdict.OWED] * 6)
    assert "### Owed (6 OWED, 0 STALE)" in only_owed and "STALE: measured" not in only_owed and " more" not in only_owed
    assert "`g5` [cuda] and 1 more" in ledger(*[Verdict.OWED] * 7)
    assert "### Owed" not in ledger(Verdict.PASS)


def test_the_sweep_section_names_its_scope_or_the_project_and_lists_equivalents():
    text = report_to_markdown(Report(), "OK", SWEEP)
    assert "### Sweep of a.py, b.py: no mutant scored, 0 survivors" in text
    assert "Equivalent (out of the score): `m1` (); `m2` (same)" in text
    bare = SweepResult(scope=(), mutants=())
    assert "### Sweep of the project: no mutant scored" in report_to_markdown(Report(), "OK", bare)


def test_a_red_baseline_and_an_interruption_follow_the_verdict_line():
    report = Report(baseline_red=(RED,), interrupted=True, unfinished=("g1", "g2"))
    assert report_to_markdown(report, "BASELINE_RED") == (
        "## seamgate: no gate judged -> exit BASELINE_RED\n\n"
        "> **BASELINE RED** baseline cpu-emulated tests: `t::a`, `t::c` — nothing else was judged\n\n"
        "> **interrupted**: not finished: g1, g2\n")
    assert "not finished: none" in report_to_markdown(Report(interrupted=True), "INTERRUPTED")


def test_write_markdown_carries_the_sweep(tmp_path: Path):
    write_markdown(tmp_path / "s.md", Report(), "OK", SWEEP)
    assert "### Sweep of a.py, b.py" in (tmp_path / "s.md").read_text()


def test_appending_creates_the_folder_and_separates_from_earlier_text_by_one_blank_line(tmp_path: Path):
    path = tmp_path / "deep" / "er" / "summary.md"
    append(path, "first\n")
    append(path, "é second\n")
    assert path.read_text(encoding="utf-8") == "first\n\né second\n"
    empty = tmp_path / "empty.md"
    empty.write_text("")
    append(empty, "x\n")
    assert empty.read_text() == "x\n"
    one = tmp_path / "one.md"
    one.write_text("a")
    append(one, "x\n")
    assert one.read_text() == "a\nx\n"


def test_a_baseline_that_timed_out_says_so_where_it_has_no_red_case():
    hung = RunOutcome("baseline cpu-emulated tests", "timeout", None, (),
                      detail="TIMEOUT: no exit after 600 s (the baseline's limit: 600 s, from baseline_timeout)")
    text = report_to_markdown(Report(baseline_red=(hung,)), "BASELINE_RED")
    assert ("> **BASELINE RED** baseline cpu-emulated tests: timeout: TIMEOUT: no exit after 600 s (the baseline's "
            "limit: 600 s, from baseline_timeout) — nothing else was judged") in text
