"""The result model and the renderers: seeds-style counts, JUnit in and out, atomic JSON."""

from __future__ import annotations

import json

from reports.json_out import write_json
from reports.junit_in import SideFile, read_cases
from reports.junit_out import report_to_junit
from reports.outcome import ArmOutcome, CaseOutcome, Provenance, Report, RunOutcome, Verdict, count_phrase

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="3">
<testcase classname="tests.test_x" name="test_a" time="0.1"><failure message="assert 2 == 3">x</failure></testcase>
<testcase classname="tests.test_x" name="test_b" time="0.1"><skipped type="pytest.skip" message="OWED: cuda arm needs a GPU">s</skipped></testcase>
<testcase classname="" name="tests.test_y" time="0"><error message="collection failure">e</error></testcase>
</testsuite></testsuites>"""


def test_count_phrase_states_cases_passed_assertions_and_failed_as_the_seeds_do():
    cases = [CaseOutcome("t::a", "failed", assertions_passed=4, assertions_failed=1),
             CaseOutcome("t::b", "failed", assertions_passed=2, assertions_failed=1),
             CaseOutcome("t::c", "passed", assertions_passed=3)]
    assert count_phrase(cases) == "3 cases, 1 passed, 11 assertions, 2 failed"


def test_junit_cases_map_back_to_node_ids_and_keep_failed_owed_and_error_apart(tmp_path):
    (tmp_path / "j.xml").write_text(JUNIT)
    (tmp_path / "c.json").write_text(json.dumps({
        "cases": {"tests/test_x.py::test_a": {"classname": "tests.test_x", "name": "test_a", "assertions_failed": 1}},
        "collect_errors": [{"nodeid": "tests/test_y.py", "classname": "", "name": "tests.test_y"}]}))
    cases = read_cases(tmp_path / "j.xml", SideFile.read(tmp_path / "c.json"))
    assert [(c.nodeid, c.kind) for c in cases] == [
        ("tests/test_x.py::test_a", "failed"), ("tests/test_x.py::test_b", "owed"), ("tests/test_y.py", "error")]
    assert cases[0].assertions_failed == 1


def test_a_missing_junit_report_reads_as_none_not_as_all_green(tmp_path):
    assert read_cases(tmp_path / "absent.xml", SideFile.read(tmp_path / "absent.json")) is None


def test_provenance_round_trips_and_is_stale_against_another_hash():
    record = Provenance(arm="cuda", device="NVIDIA H200", capability="9.0", torch="2.13", code_hash="a" * 64)
    assert Provenance.from_json(record.to_json()) == record
    assert record.stale_against("b" * 64) and not record.stale_against("a" * 64)


def test_junit_out_writes_fail_as_failure_error_as_error_and_owed_as_skipped():
    report = Report(outcomes=(ArmOutcome("g1", "cpu-emulated", Verdict.FAIL, "extra red: t::b"),
                              ArmOutcome("g2", "cpu-emulated", Verdict.ERROR, "broke import"),
                              ArmOutcome("g3", "cuda", Verdict.OWED, "OWED: needs a GPU")))
    suite = next(iter(report_to_junit(report)))
    kinds = {c.name: (type(c.result[0]).__name__, c.result[0].message) for c in suite}
    assert kinds == {"g1[cpu-emulated]": ("Failure", "extra red: t::b"), "g2[cpu-emulated]": ("Error", "broke import"),
                     "g3[cuda]": ("Skipped", "OWED: needs a GPU")}


def test_json_is_written_atomically_with_the_exit_code(tmp_path):
    run = RunOutcome("baseline", "completed", 0, (CaseOutcome("t::a", "passed"),))
    write_json(tmp_path / "r.json", Report(outcomes=(ArmOutcome("g", "cpu-emulated", Verdict.PASS, runs=(run,)),)), 0)
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["exit_code"] == 0 and data["outcomes"][0]["runs"][0]["summary"] == "1 case, 1 passed, 0 assertions, 0 failed, exit 0"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_markdown_summary_has_the_totals_the_exit_code_and_one_row_per_gate_and_arm(tmp_path):
    from reports.markdown_out import write_markdown

    report = Report(outcomes=(ArmOutcome("g1", "cpu-emulated", Verdict.PASS, "reds exactly a|b"),
                              ArmOutcome("g1", "cuda", Verdict.OWED, "OWED: needs a GPU")))
    write_markdown(tmp_path / "s.md", report, "OK")
    text = (tmp_path / "s.md").read_text()
    assert text.startswith("## seamgate: 1 PASS, 1 OWED -> exit OK")
    assert "| `g1` | cpu-emulated | ✅ PASS | reds exactly a\\|b |" in text
    assert "| `g1` | cuda | 🟡 OWED | OWED: needs a GPU |" in text


def test_the_terminal_report_prints_each_message_whole_on_its_own_line():
    import io

    from rich.console import Console

    from reports.terminal import print_report

    long = "mutation m: reds exactly tests/seam/test_scope.py::test_the_scope_joins_an_outstanding_fork_before_the_close[cpu-emulated]"
    out = io.StringIO()
    print_report(Report(outcomes=(ArmOutcome("g", "cpu-emulated", Verdict.PASS, long),)), Console(file=out, width=80), "OK")
    assert f"g [cpu-emulated] PASS: {long}" in out.getvalue()
