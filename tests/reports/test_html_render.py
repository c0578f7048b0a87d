"""The HTML page's parts and the render entry point, case by case (no browser: test_report_html_browser.py opens it).

Written after a sweep of reports/html_out.py, reports/render.py and reports/summary.py against the
format tests left 109 of 573 mutants alive: the recorded result has no error or survived gate row,
no class-based test id, no empty section, and its JSON had no shard. With this file: 517 of 573,
then the inferred cell, the sections' exact words and the baseline's counts; most of the rest are
equivalent (the text console's colour, highlight and width options on a file that is no terminal,
``dict.get(t, "")`` against ``dict.get(t)``) or a literal's case in a refusal.
Command: ``seamgate sweep reports/html_out.py reports/render.py reports/summary.py --tests
tests/reports/test_html_render.py --tests tests/reports/test_report_formats.py --tests
tests/reports/test_junit_md.py --output /tmp/sw``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.html_out import matrix_rows, render_html, run_row
from reports.mutants import MutantOutcome, SweepResult
from reports.outcome import ArmOutcome, CaseOutcome, Report, RunOutcome, Verdict
from reports.render import render
from reports.results import KeptResult


def run(label: str, *cases: CaseOutcome, end: str = "completed") -> RunOutcome:
    return RunOutcome(label, end, 1 if end == "completed" else None, tuple(cases))


def test_a_rows_cells_are_red_ran_or_inferred_and_its_status_follows_them():
    row = run_row(run("mutation m cpu-emulated", CaseOutcome("t::a", "failed"), CaseOutcome("t::b", "passed"),
                      CaseOutcome("t::c", "passed", inferred=True)))
    assert row.cells == {"t::a": "k", "t::b": "r", "t::c": "i"} and row.status == "killed"
    assert run_row(run("m", CaseOutcome("t::b", "passed"))).status == "survived"
    assert run_row(run("m", CaseOutcome("t::a", "failed"), CaseOutcome("t", "error"))).status == "error"
    assert run_row(run("m", CaseOutcome("t::a", "failed"), end="crash")).status == "error"


def test_the_matrix_takes_each_non_baseline_run_once_after_the_sweeps_mutants():
    mutation = run("mutation m cpu-emulated", CaseOutcome("t::a", "failed"))
    outcomes = (ArmOutcome("g1", "cpu-emulated", Verdict.PASS, runs=(run("baseline cpu-emulated tests"), mutation)),
                ArmOutcome("g2", "cpu-emulated", Verdict.PASS, runs=(run("working tree cpu-emulated"), mutation)))
    sweep = SweepResult(scope=("a.py",), mutants=(MutantOutcome("m1", "a.py", 3, status="survived"),))
    assert [r.id for r in matrix_rows(Report(outcomes=outcomes), sweep)] == ["m1", "mutation m cpu-emulated"]


def test_the_page_shows_what_is_missing_in_words():
    page = render_html(Report(), "NOTHING_JUDGED")
    for section in ('<h2 id="gates">Gates</h2>\n<p>No gate arm in this result.</p>',
                    '<h2 id="owed">OWED ledger</h2>\n<p>Nothing owed: every arm was measured on this code.</p>',
                    '<h2 id="kill-matrix">Kill matrix</h2>\n<p>No mutant or mutation row in this result.</p>',
                    '<h2 id="survivors">Survivors</h2>\n<p>No sweep in this result (<code>seamgate sweep</code> '
                    'writes one).</p>'):
        assert section in page
    assert "<title>seamgate report</title>" in page
    killed = SweepResult(scope=("a.py", "b.py"), mutants=(MutantOutcome("m1", "a.py", 3, status="killed"),))
    page = render_html(Report(), "OK", killed)
    assert "</p>\n<p>No survivor.</p>\n" in page and "Sweep of a.py, b.py on cpu-emulated" in page


def test_a_matrix_names_its_killing_tests_by_their_last_part_and_leaves_unrun_cells_empty():
    rows = (run("mutation m1 x", CaseOutcome("tests/t.py::TestA::test_b", "failed")),
            run("mutation m2 x", CaseOutcome("tests/t.py::test_c", "failed")))
    page = render_html(Report(outcomes=(ArmOutcome("g", "x", Verdict.PASS, runs=rows),)), "OK")
    assert '<th class="test" title="tests/t.py::TestA::test_b">test_b</th>' in page
    assert '<td class="k">K</td><td></td></tr>' in page  # m1 killed by test_b, test_c never ran on it
    inferred = (run("mutation m1 x", CaseOutcome("t::a", "failed")), run("mutation m2 x", CaseOutcome("t::a", "passed", inferred=True)))
    page = render_html(Report(outcomes=(ArmOutcome("g", "x", Verdict.PASS, runs=inferred),)), "OK")
    assert '<td class="i">i</td></tr>' in page  # t::a kills m1 and was inferred on m2


def test_a_red_baseline_names_its_red_cases_or_how_the_run_ended():
    red = run("baseline x", CaseOutcome("t::a", "failed"), CaseOutcome("", "error"), CaseOutcome("t::p", "passed"))
    assert ("BASELINE RED baseline x: t::a, (the session) (3 cases, 1 passed, 0 assertions, 0 failed, exit 1); "
            "nothing else was judged</p>") in render_html(Report(baseline_red=(red,)), "BASELINE_RED")
    died = RunOutcome("baseline y", "crash", None, detail="signal 9")
    assert "BASELINE RED baseline y: crash: signal 9 (" in render_html(Report(baseline_red=(died,)), "BASELINE_RED")
    silent = RunOutcome("baseline z", "timeout", None)
    page = render_html(Report(baseline_red=(silent,), interrupted=True), "BASELINE_RED")
    assert "BASELINE RED baseline z: timeout: no detail (" in page and "interrupted: not finished: none" in page
    assert "not finished: g1, g2" in render_html(Report(interrupted=True, unfinished=("g1", "g2")), "INTERRUPTED")


def test_json_keeps_the_shard_and_plan_and_writes_odd_facts_as_text():
    kept = KeptResult(Path("/k/outcomes.json"), Report(outcomes=(
        ArmOutcome("g", "x", Verdict.PASS, facts={"where": Path("/k/log.txt")}),)), 0, shard=(1, 2), plan="p" * 64)
    data = json.loads(render(kept, "json", "OK"))
    assert data["shard"] == {"k": 1, "n": 2} and data["plan"] == "p" * 64
    assert data["outcomes"][0]["facts"] == {"where": "/k/log.txt"}


def test_an_unknown_format_names_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown format 'pdf' \(known: text, md, json, junit, mte, html\)"):
        render(KeptResult(Path("/k/outcomes.json"), Report(), 0), "pdf", "OK")


def test_text_prints_a_sweeps_lines_verbatim_and_whole():
    reason = "[bold]not markup[/bold] " + "x" * 200
    sweep = SweepResult(scope=("a.py",), mutants=(MutantOutcome("m1", "a.py", 3, status="equivalent", reason=reason),))
    text = render(KeptResult(Path("/k/outcomes.json"), Report(), 0, sweep=sweep), "text", "OK")
    assert f"  EQUIVALENT a.py:3 m1: {reason}\n" in text
    assert text.endswith("results kept in /k\nsweep no mutant scored, 0 survivors -> exit OK\n")
