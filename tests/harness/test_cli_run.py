"""`seamgate run` parsing and dispatch, and how main() turns errors into exit codes."""

from __future__ import annotations

import argparse
import sys
import types
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.exit_codes import ExitCode


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.seamgate]\ngates = ['gates']\njobs = 3\n")
    (tmp_path / "gates").mkdir()
    return tmp_path


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> list[argparse.Namespace]:
    """A stand-in ``harness.run.runner`` that records the namespace it is given."""
    calls: list[argparse.Namespace] = []
    module = types.ModuleType("harness.run.runner")
    module.run_command = lambda args: calls.append(args) or ExitCode.GATE_FAILED  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "harness.run.runner", module)
    return calls


def test_run_hands_the_resolved_options_to_the_runner_and_returns_its_code(project: Path, runner: list) -> None:
    code = main(["run", "--project", str(project), "--gate", "a", "--gate", "b", "--shard", "2/3",
                 "--json", "out.json", "--fail-on-owed"])
    assert code == ExitCode.GATE_FAILED
    [args] = runner
    assert args.project == project.resolve() and args.gate == ["a", "b"] and args.shard == (2, 3)
    assert args.jobs == 3 and args.json == Path("out.json") and args.junit is None and args.fail_on_owed
    assert args.gate_files == [project.resolve() / "gates"] and args.config.jobs == 3


def test_the_global_project_option_reaches_the_run_subcommand(project: Path, runner: list) -> None:
    main(["--project", str(project), "run", "--jobs", "5"])
    assert runner[0].project == project.resolve() and runner[0].jobs == 5


@pytest.mark.parametrize("shard", ["3/2", "0/2", "1-2", "x"])
def test_a_bad_shard_is_a_usage_error(project: Path, runner: list, shard: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--project", str(project), "--shard", shard]) == ExitCode.USAGE_ERROR
    assert "--shard" in capsys.readouterr().err and runner == []


def test_a_missing_runner_is_reported_plainly_as_internal(project: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "harness.run.runner", None)
    assert main(["run", "--project", str(project)]) == ExitCode.INTERNAL
    assert "harness.run.runner is missing" in capsys.readouterr().err


def test_an_unexpected_exception_prints_its_traceback_and_says_it_is_a_bug(
        project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    module = types.ModuleType("harness.run.runner")
    module.run_command = lambda args: 1 / 0  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "harness.run.runner", module)
    assert main(["run", "--project", str(project)]) == ExitCode.INTERNAL
    err = capsys.readouterr().err
    assert "Traceback" in err and "ZeroDivisionError" in err and "this is a bug in seamgate" in err


def test_argparse_usage_errors_exit_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == ExitCode.USAGE_ERROR
    assert "invalid choice" in capsys.readouterr().err


def test_help_lists_every_exit_code_with_its_meaning(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == ExitCode.OK
    out = capsys.readouterr().out
    for code in ExitCode:
        assert f"{int(code):>3}  {code.name}: " in out
    assert "Another seamgate run holds this repository's lock." in out
