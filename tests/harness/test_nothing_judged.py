"""Nothing judged is never green: each way of judging nothing exits NOTHING_JUDGED, and a folder
that is not a seamgate project is refused with nothing written into it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.exit_codes import ExitCode
from harness.exit_mapping import code_for_report
from harness.run.runner import RunOptions, catalog_materializer, run_gates
from reports.outcome import ArmOutcome, Report, Verdict
from tests.reports.fixture_projects import catalog, gate, write_project

GATE = "version: 1\ngates:\n  - {id: g, kind: replay, select: [tests], arms: [cpu-emulated]}\n"


def project(root: Path, pyproject: str = "[tool.seamgate]\n", gates: str | None = None) -> Path:
    files = {"pyproject.toml": pyproject, "calc/__init__.py": "ONE = 1\n", "tests/test_a.py": "def test_a():\n    assert True\n"}
    if gates is not None:
        files["gates/g.yaml"] = gates
    return write_project(root, files)


def seamgate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def test_nothing_judged_has_its_own_non_zero_exit_code_documented_in_the_enum() -> None:
    assert int(ExitCode.NOTHING_JUDGED) not in (0, *(int(c) for c in ExitCode if c is not ExitCode.NOTHING_JUDGED))


def test_a_project_without_any_gate_file_judges_nothing_and_says_why(tmp_path: Path, capsys) -> None:
    root = project(tmp_path / "p")
    code, text = seamgate(capsys, "--project", str(root), "run")
    assert code == ExitCode.NOTHING_JUDGED
    assert "no gate" in text and "NOTHING_JUDGED" in text


def test_an_empty_gates_setting_judges_nothing(tmp_path: Path, capsys) -> None:
    root = project(tmp_path / "p", "[tool.seamgate]\ngates = []\n", gates=GATE)
    code, text = seamgate(capsys, "--project", str(root), "run")
    assert code == ExitCode.NOTHING_JUDGED and "gates = []" in text


@pytest.mark.parametrize("extra", [(), ("--fail-on-owed",)])
def test_an_arm_no_gate_lists_judges_nothing_even_under_fail_on_owed(tmp_path: Path, capsys, extra) -> None:
    root = project(tmp_path / "p", gates=GATE)
    code, text = seamgate(capsys, "--project", str(root), "run", "--arm", "cuda", *extra)
    assert code == ExitCode.NOTHING_JUDGED
    assert "--arm cuda" in text and "no gate lists" in text


def test_the_empty_plan_starts_nothing_and_writes_nothing_into_the_project(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    report, code = run_gates([], project=root, options=RunOptions(progress=False),
                             materializer=catalog_materializer(catalog()), stdout=io.StringIO())
    assert code == ExitCode.NOTHING_JUDGED and report.outcomes == ()
    assert not (root / ".seamgate").exists()


def test_a_report_whose_every_arm_is_owed_judged_nothing_unless_fail_on_owed_says_owed() -> None:
    owed = Report(outcomes=(ArmOutcome("g", "cuda", Verdict.OWED, "OWED: needs a GPU"),))
    assert code_for_report(owed, fail_on_owed=False) == ExitCode.NOTHING_JUDGED
    assert code_for_report(owed, fail_on_owed=True) == ExitCode.OWED
    passed = Report(outcomes=(*owed.outcomes, ArmOutcome("g", "cpu-emulated", Verdict.PASS)))
    assert code_for_report(passed, fail_on_owed=False) == ExitCode.OK
    assert code_for_report(Report(), fail_on_owed=True) == ExitCode.NOTHING_JUDGED


@pytest.mark.parametrize("command", [("run",), ("validate",), ("mutations", "list")])
def test_a_project_folder_without_tool_seamgate_is_refused_and_left_untouched(tmp_path: Path, capsys,
                                                                               command) -> None:
    root = tmp_path / "etc"
    root.mkdir()
    (root / "hosts").write_text("127.0.0.1 localhost\n")
    before = sorted(p.name for p in root.rglob("*"))
    code, text = seamgate(capsys, "--project", str(root), *command)
    assert code == ExitCode.USAGE_ERROR
    assert "not a seamgate project" in text and "[tool.seamgate]" in text and "Traceback" not in text
    assert sorted(p.name for p in root.rglob("*")) == before


def test_a_gate_that_is_judged_still_exits_ok(tmp_path: Path, capsys) -> None:
    from tests.reports.fixture_projects import shared_server

    root = project(tmp_path / "p")
    report, code = run_gates([gate("g", kind="replay")], project=root, options=RunOptions(progress=False),
                             materializer=catalog_materializer(catalog()), stdout=io.StringIO(),
                             launcher=shared_server())
    assert code == ExitCode.OK and [o.verdict for o in report.outcomes] == [Verdict.PASS]
