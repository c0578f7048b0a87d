"""Report formats are one registry (``reports/render.py``): ``seamgate report --format``, ``seamgate run
--report FMT=PATH`` and run's ``--json``/``--junit``/``--markdown`` all follow it, and ``--report`` writes
what the format's renderer writes."""

from __future__ import annotations

import argparse
import sys
import types
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.exit_codes import ExitCode
from harness.run.runner import RunOptions, _write_outputs
from reports.render import BY_NAME, FORMATS, REPORT_FORMATS, render
from reports.results import load

RECORDED = Path(__file__).parent / "recorded"


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> list[argparse.Namespace]:
    calls: list[argparse.Namespace] = []
    module = types.ModuleType("harness.run.runner")
    module.run_command = lambda args: calls.append(args) or ExitCode.OK  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "harness.run.runner", module)
    return calls


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.seamgate]\ngates = ['gates']\n")
    (tmp_path / "gates").mkdir()
    return tmp_path


def test_every_format_is_one_registry_entry_and_the_commands_offer_exactly_those(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert FORMATS == tuple(f.name for f in REPORT_FORMATS) == ("text", "md", "json", "junit", "mte", "html")
    assert main(["report", "--help"]) == ExitCode.OK
    report_help = " ".join(capsys.readouterr().out.split())
    assert main(["run", "--help"]) == ExitCode.OK
    run_help = " ".join(capsys.readouterr().out.split())
    for fmt in REPORT_FORMATS:
        assert " ".join(fmt.help.split()) in report_help
        assert fmt.name in run_help.split("--report FMT=PATH", 2)[-1]
        if fmt.run_flag is not None:
            assert f"{fmt.run_flag[0]} FILE" in run_help


def test_run_takes_repeated_report_options_as_format_and_path(project: Path, runner: list) -> None:
    assert main(["run", "--project", str(project), "--report", "html=out/r.html", "--report", "md=r.md"]) == ExitCode.OK
    assert runner[0].report == [("html", Path("out/r.html")), ("md", Path("r.md"))]


@pytest.mark.parametrize("value", ["pdf=r.pdf", "html", "html="])
def test_a_bad_report_option_is_a_usage_error_naming_the_formats(
        project: Path, runner: list, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--project", str(project), "--report", value]) == ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert "--report" in err and "text, md, json, junit, mte, html" in err and runner == []


def test_run_writes_each_report_option_as_its_renderer_does_and_json_as_the_json_flag_does(tmp_path: Path) -> None:
    kept = load(RECORDED)
    code = ExitCode(kept.exit_code)
    paths = {fmt: tmp_path / f"r.{fmt}" for fmt in ("json", "junit", "md", "html")}
    options = RunOptions(json=tmp_path / "flag.json", shard=kept.shard,
                         reports=tuple((fmt, path) for fmt, path in paths.items()))
    _write_outputs(kept.report, options, code, plan=kept.plan, kept=RECORDED, project=RECORDED / "src")
    assert paths["json"].read_text() == (tmp_path / "flag.json").read_text()
    without_sweep = type(kept)(source=kept.source, report=kept.report, exit_code=kept.exit_code, shard=kept.shard,
                               plan=kept.plan)
    for fmt in ("junit", "md", "html"):
        assert paths[fmt].read_text() == render(without_sweep, fmt, code.name, project_root=RECORDED / "src"), fmt
    assert BY_NAME["md"].run_flag and BY_NAME["md"].run_flag[0] == "--markdown"
