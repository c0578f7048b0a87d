"""Failures say why (issue 15): a baseline red from collection names the underlying error; a baseline that collected nothing is an error."""

from __future__ import annotations

import json

from harness.exit_codes import ExitCode
from reports.outcome import Verdict
from tests.harness.test_runner import run
from tests.reports.fixture_projects import CALC, gate, write_project


def test_a_collection_error_in_the_baseline_shows_the_module_not_found_text_in_terminal_and_json(tmp_path):
    files = {**CALC, "tests/test_mul.py": "import nosuchmodule_xyz\n\n\ndef test_mul():\n    pass\n"}
    project = write_project(tmp_path / "p", files)
    out = tmp_path / "r.json"
    report, code, text = run(project, gate("g", select=("tests",)), json=out)
    assert code is ExitCode.BASELINE_RED
    want = "ModuleNotFoundError: No module named 'nosuchmodule_xyz'"
    assert want in text, text
    messages = [c["message"] for r in json.loads(out.read_text())["baseline_red"] for c in r["cases"]]
    assert any(want in m for m in messages), messages


def test_a_baseline_that_collected_no_case_is_an_error_never_green(tmp_path):
    project = write_project(tmp_path / "p", {**CALC, "tests/test_empty.py": "X = 1\n"})
    report, code, text = run(project, gate("g", select=("tests/test_empty.py",)))
    assert code is ExitCode.BASELINE_RED and Verdict.PASS not in {o.verdict for o in report.outcomes}
    assert "pytest collected no test from tests/test_empty.py" in text, text
