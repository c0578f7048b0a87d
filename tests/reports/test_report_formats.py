"""Every report format on a recorded result: golden files, JUnit read back, JSON and mte against their schemas.

The recorded result ``tests/reports/recorded/outcomes.json`` holds gate arms trimmed from real kept
runs of this repository (PASS, FAIL, OWED, STALE; their case lists cut to the red ones and a few
green and inferred ones) plus a hand-written ERROR arm whose message carries ANSI colour codes, and
a hand-written sweep over ``recorded/src/calc.py`` with a mutant of each status. Golden files live
in ``tests/reports/golden/``; ``SEAMGATE_UPDATE_GOLDEN=1`` rewrites them (then read the diff).
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from junitparser import Error, Failure, JUnitXml, Properties, Skipped

from reports.json_out import report_to_json
from reports.junit_out import junit_text, write_junit, xml_safe
from reports.markdown_out import report_to_markdown, write_markdown
from reports.outcome import ArmOutcome, Report, Verdict
from reports.render import FORMATS, render
from reports.results import load

HERE = Path(__file__).parent
RECORDED = HERE / "recorded"
GOLDEN = HERE / "golden"
REPO = HERE.parent.parent
SUFFIX = {"text": "txt", "md": "md", "json": "json", "junit": "xml", "mte": "mte.json", "html": "html"}


def recorded():
    return load(RECORDED)


def rendered(fmt: str) -> str:
    out = render(recorded(), fmt, "GATE_ERROR", project_root=RECORDED / "src")
    return out.replace(str(RECORDED), "<RECORDED>")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_of_the_recorded_result_matches_its_golden_file(fmt: str):
    golden = GOLDEN / f"report.{SUFFIX[fmt]}"
    text = rendered(fmt)
    if os.environ.get("SEAMGATE_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8"), f"{golden} differs; SEAMGATE_UPDATE_GOLDEN=1 rewrites it"


def test_the_recorded_result_has_every_verdict_and_every_mutant_status_it_is_meant_to_cover():
    kept = recorded()
    assert {o.verdict for o in kept.report.outcomes} == {Verdict.PASS, Verdict.FAIL, Verdict.OWED, Verdict.STALE,
                                                         Verdict.ERROR}
    assert kept.sweep is not None
    assert {m.status for m in kept.sweep.mutants} >= {"killed", "survived", "no_coverage", "equivalent"}


def test_reading_outcomes_json_back_gives_the_model_that_was_written():
    kept = recorded()
    again = json.loads(json.dumps(report_to_json(kept.report, kept.exit_code, sweep=kept.sweep)))
    assert again == json.loads((RECORDED / "outcomes.json").read_text())


def test_a_case_keeps_its_duration_and_inferred_mark_through_outcomes_json(tmp_path: Path):
    """Red against the old writer, which dropped each case's duration."""
    from reports.json_out import write_json
    from reports.outcome import CaseOutcome, RunOutcome

    run = RunOutcome("mutation m cpu-emulated", "completed", 1,
                     (CaseOutcome("t::a", "failed", "boom", 1, 1, 0.25), CaseOutcome("t::b", "passed", inferred=True)))
    report = Report(outcomes=(ArmOutcome("g", "cpu-emulated", Verdict.FAIL, "extra red: t::a", runs=(run,)),))
    write_json(tmp_path / "outcomes.json", report, 1, shard=(2, 3), plan="a" * 64)
    kept = load(tmp_path)
    assert kept.report == report and kept.exit_code == 1 and kept.shard == (2, 3) and kept.plan == "a" * 64


# --- JUnit ------------------------------------------------------------------------------------------

def _verdict_of(case) -> str:
    results = list(case.result)
    if not results:
        return "PASS"
    result = results[0]
    if isinstance(result, Failure):
        return "FAIL"
    return result.type  # Error: ERROR/TIMEOUT/CRASH, Skipped: OWED/STALE


def test_junit_parses_back_to_the_same_verdicts_and_mutant_statuses(tmp_path: Path):
    kept = recorded()
    path = tmp_path / "junit.xml"
    write_junit(path, kept.report, kept.sweep)
    assert path.read_text().startswith('<?xml version="1.0" encoding="utf-8"?>')
    xml = JUnitXml.fromfile(str(path))
    suites = {suite.name: list(suite) for suite in xml}
    gates = {case.name: _verdict_of(case) for case in suites["seamgate"]}
    assert gates == {f"{o.gate}[{o.arm}]": o.verdict.value for o in kept.report.outcomes}
    statuses = {case.name: [p.value for p in case.child(Properties)][0] for case in suites["seamgate.sweep"]}
    assert statuses == {m.id: m.status for m in kept.sweep.mutants}
    kinds = {case.name: type(case.result[0]).__name__ if case.result else "passed" for case in suites["seamgate.sweep"]}
    assert kinds["calc.x_clamp__mutmut_2"] == "Failure" and kinds["calc.x_describe__mutmut_1"] == "Failure"
    assert kinds["calc.x_scale__mutmut_1"] == "Skipped" and kinds["calc.x_clamp__mutmut_1"] == "passed"


def test_junit_failure_bodies_carry_the_detail_and_owed_and_stale_are_skipped_with_their_reason():
    kept = recorded()
    xml = JUnitXml.fromstring(junit_text(kept.report, kept.sweep).split("\n", 1)[1])
    cases = {case.name: case for suite in xml for case in suite}
    fail = cases["g3-note-join-retires[cpu-emulated]"].result[0]
    assert isinstance(fail, Failure) and "extra red" in fail.message
    assert "mutation seam-note-join-keeps-entry cpu-emulated: " in fail.text and "log: " in fail.text
    owed = cases["g1-seam-tiny-model[cuda]"].result[0]
    assert isinstance(owed, Skipped) and owed.type == "OWED" and owed.message.startswith("OWED: cuda arm needs")
    stale = next(c for name, c in cases.items() if c.result and getattr(c.result[0], "type", "") == "STALE")
    assert "the code under test is now" in stale.result[0].message
    survivor = cases["calc.x_clamp__mutmut_2"].result[0]
    assert "+    if value >= high:" in survivor.text


def test_control_characters_in_a_message_are_escaped_and_the_junit_file_still_parses(tmp_path: Path):
    """Red against the old writer: it wrote ESC and NUL raw and the file stopped parsing at them."""
    report = Report(outcomes=(ArmOutcome("g", "cpu-emulated", Verdict.FAIL, "red \x1b[31mx\x1b[0m \x00 end\x0b"),
                              ArmOutcome("h", "cpu-emulated", Verdict.ERROR, "import \x07 broke")))
    path = tmp_path / "j.xml"
    write_junit(path, report)  # the writer `seamgate run --junit` uses
    ET.parse(path)  # a strict XML 1.0 parser
    cases = {c.name: c for suite in JUnitXml.fromfile(str(path)) for c in suite}
    assert cases["g[cpu-emulated]"].result[0].message == "red #x1B[31mx#x1B[0m #x00 end#x0B"
    assert isinstance(cases["h[cpu-emulated]"].result[0], Error)


def test_xml_safe_keeps_tab_newline_and_ordinary_unicode():
    assert xml_safe("a\tb\nc ✅ é") == "a\tb\nc ✅ é"
    assert xml_safe("\x1b\x7f") == "#x1B#x7F"


# --- JSON and its published schema ------------------------------------------------------------------

def _validator(path: Path) -> jsonschema.protocols.Validator:
    schema = json.loads(path.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_json_output_validates_against_the_published_result_schema():
    validator = _validator(REPO / "harness" / "results" / "result_schema.json")
    data = json.loads(rendered("json"))
    assert sorted(e.message for e in validator.iter_errors(data)) == []
    assert data["schema"] == 1 and data["sweep"]["mutants"][0]["killers"]


def test_the_result_schema_refuses_a_layout_a_reader_would_misread():
    validator = _validator(REPO / "harness" / "results" / "result_schema.json")
    data = json.loads(rendered("json"))
    for broken in ({**data, "schema": 2}, {**data, "surprise": 1},
                   {**data, "outcomes": [{**data["outcomes"][0], "verdict": "GREEN"}]}):
        assert list(validator.iter_errors(broken)), broken.keys()


def test_a_real_kept_outcomes_json_of_this_repository_validates_when_there_is_one():
    validator = _validator(REPO / "harness" / "results" / "result_schema.json")
    kept = REPO / ".seamgate" / "runs" / "latest" / "outcomes.json"
    for path in [RECORDED / "outcomes.json", *([kept] if kept.is_file() else [])]:
        assert [e.message for e in validator.iter_errors(json.loads(path.read_text()))] == [], path


# --- mte --------------------------------------------------------------------------------------------

def test_mte_output_validates_against_the_mutation_testing_report_schema():
    validator = _validator(HERE / "mutation-testing-report-schema.json")
    data = json.loads(rendered("mte"))
    assert [e.message for e in validator.iter_errors(data)] == []
    assert data["schemaVersion"] == "2"
    mutants = {m["id"]: m for m in data["files"]["calc.py"]["mutants"]}
    assert mutants["calc.x_clamp__mutmut_1"]["status"] == "Killed"
    assert mutants["calc.x_clamp__mutmut_1"]["killedBy"] == ["tests/test_calc.py::test_clamp_low",
                                                             "tests/test_calc.py::test_clamp_edges"]
    assert mutants["calc.x_clamp__mutmut_2"]["status"] == "Survived"
    assert mutants["calc.x_clamp__mutmut_2"]["replacement"] == "value >= high"  # the location's new text, as viewers splice it
    assert mutants["calc.x_describe__mutmut_1"]["status"] == "NoCoverage"
    assert mutants["calc.x_scale__mutmut_1"]["status"] == "Ignored"
    assert data["files"]["calc.py"]["source"] == (RECORDED / "src" / "calc.py").read_text()


def test_the_schema_copy_refuses_what_viewers_would_refuse():
    validator = _validator(HERE / "mutation-testing-report-schema.json")
    data = json.loads(rendered("mte"))
    mutant = data["files"]["calc.py"]["mutants"][0]
    for bad in ({**mutant, "status": "killed"}, {**mutant, "location": {"start": {"line": 0, "column": 1}}},
                {k: v for k, v in mutant.items() if k != "mutatorName"}):
        broken = {**data, "files": {"calc.py": {**data["files"]["calc.py"], "mutants": [bad]}}}
        assert list(validator.iter_errors(broken))


# --- Markdown ---------------------------------------------------------------------------------------

def test_markdown_puts_the_verdict_then_failures_then_the_owed_ledger_then_survivors_and_folds_the_table():
    text = rendered("md")
    order = [text.index(s) for s in ("## seamgate:", "### Failures", "### Owed", "### Sweep", "All 8 gate arms")]
    assert order == sorted(order)
    assert "calc.x_clamp__mutmut_2" in text and "Equivalent (out of the score)" in text
    table = text.index("| gate | arm | verdict | message |")
    assert text.rfind("<details>", 0, table) > text.rfind("</details>", 0, table)  # the long table is folded


def test_markdown_of_ninety_gate_arms_with_twenty_failures_stays_short():
    """The recorded result eleven times over: 88 arms, 22 of them failures, 22 OWED, 11 STALE."""
    many = Report(outcomes=recorded().report.outcomes * 11)
    text = report_to_markdown(many, "GATE_ERROR")
    visible = text[: text.index("<details>\n<summary>12 more failures</summary>")]
    assert len(text.encode()) < 25_000 and len(visible.encode()) < 6_000, (len(text.encode()), len(visible.encode()))
    assert visible.count("\n- ") == 10  # ten failures shown, the other twelve folded


def test_markdown_is_appended_to_the_github_step_summary_never_replacing_it(tmp_path: Path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("# an earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    report = Report(outcomes=(ArmOutcome("g1", "cpu-emulated", Verdict.PASS, "ok"),))
    write_markdown(summary, report, "OK")  # `seamgate run --markdown "$GITHUB_STEP_SUMMARY"`
    write_markdown(summary, report, "OK")
    text = summary.read_text()
    assert text.startswith("# an earlier step\n") and text.count("## seamgate: 1 PASS -> exit OK") == 2


def test_markdown_to_another_file_replaces_it(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    path = tmp_path / "other.md"
    path.write_text("old\n")
    write_markdown(path, Report(outcomes=(ArmOutcome("g1", "cpu-emulated", Verdict.PASS, "ok"),)), "OK")
    assert "old" not in path.read_text()


@pytest.mark.parametrize("fmt", ["text", "md", "html"])
def test_a_sweeps_own_result_leads_with_its_score_not_with_no_gate_judged(fmt: str):
    from dataclasses import replace

    kept = recorded()
    sweep_only = replace(kept, report=Report())
    import html

    text = html.unescape(render(sweep_only, fmt, "GATE_FAILED"))
    assert "no gate judged" not in text
    if fmt == "text":  # the last line, as `seamgate run` ends: totals and the exit code
        assert text.rstrip().endswith("\nsweep 50.0% (2 of 4 detected), 2 survivors -> exit GATE_FAILED")
    else:
        assert "seamgate: sweep 50.0% (2 of 4 detected), 2 survivors -> exit GATE_FAILED" in text


def test_a_gate_run_with_a_sweep_states_both_in_its_verdict_line():
    assert rendered("md").startswith("## seamgate: 3 PASS, 1 FAIL, 1 ERROR, 2 OWED, 1 STALE; sweep 50.0% (2 of 4 "
                                     "detected), 2 survivors -> exit GATE_ERROR\n")


@pytest.mark.parametrize("fmt", ["md", "html", "junit"])
def test_no_format_lets_a_control_character_through(fmt: str):
    """The recorded ERROR arm's message holds ESC (pytest's ANSI colours): the html escaped it only for HTML."""
    text = rendered(fmt)
    assert "\x1b" not in text and "#x1B[31mNameError" in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_red_baseline_and_an_interruption_show_in_every_gate_format(fmt: str):
    from dataclasses import replace

    from reports.outcome import CaseOutcome, RunOutcome

    red = RunOutcome("baseline cpu-emulated tests", "completed", 1, (CaseOutcome("tests/test_x.py::test_a", "failed"),))
    kept = replace(recorded(), report=Report(baseline_red=(red,), interrupted=True, unfinished=("g9",)), sweep=None)
    if fmt == "mte":
        with pytest.raises(ValueError, match="holds no sweep"):
            render(kept, fmt, "BASELINE_RED")
        return
    text = render(kept, fmt, "BASELINE_RED")
    assert "tests/test_x.py::test_a" in text
    if fmt in ("text", "md", "html"):
        assert "BASELINE RED" in text and "g9" in text
    if fmt == "junit":
        case = next(c for suite in JUnitXml.fromstring(text.split("\n", 1)[1]) for c in suite)
        assert isinstance(case.result[0], Error) and case.result[0].type == "BaselineRed"
    if fmt == "json":
        assert json.loads(text)["unfinished"] == ["g9"]


def test_the_junit_text_is_the_same_whichever_serializer_junitparser_picked():
    # junitparser writes through lxml where it is installed (the GPU machine), else the standard
    # library: '<x a="1"/>' against '<x a="1" />'. The golden file must match on both.
    from reports.junit_out import empty_tags_spaced

    lxml_style = '<testcase name="g[cuda]"><skipped message="OWED: a /&gt; b" type="OWED"/><properties/></testcase>'
    assert empty_tags_spaced(lxml_style) == ('<testcase name="g[cuda]"><skipped message="OWED: a /&gt; b" '
                                             'type="OWED" /><properties /></testcase>')
    assert empty_tags_spaced(empty_tags_spaced(lxml_style)) == empty_tags_spaced(lxml_style)
