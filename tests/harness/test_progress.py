"""Progress for CI logs: one line per finished gate arm on a stream that is not a terminal."""

from __future__ import annotations

import io
from pathlib import Path

from harness.gates.model import RedSet
from harness.run.runner import RunOptions, catalog_materializer, run_gates
from reports.terminal import GateProgress
from tests.reports.fixture_projects import catalog, gate, mutation, shared_server, write_project

MUTATIONS = catalog(mutation("add-off-by-one", "return a + b", "return a + b + 1"))


def test_off_a_terminal_each_finished_gate_arm_prints_one_line_with_done_and_total(tmp_path: Path, capsys) -> None:
    project = write_project(tmp_path / "p")
    gates = [gate("green", kind="replay"), gate("red", mutation="add-off-by-one", red=RedSet(files=("tests/test_add.py",)))]
    run_gates(gates, project=project, options=RunOptions(progress=None), materializer=catalog_materializer(MUTATIONS),
              stdout=io.StringIO(), launcher=shared_server())
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[")]
    assert [line.split(" s")[0].rsplit(" ", 1)[0] for line in lines] == [
        "[1/2] PASS green [cpu-emulated]", "[2/2] PASS red [cpu-emulated]"]


def test_progress_off_prints_nothing_and_a_terminal_gets_a_bar_not_lines() -> None:
    quiet, tty = io.StringIO(), io.StringIO()
    with GateProgress(1, "off", quiet) as progress:
        progress.finished("g", "cpu-emulated", "PASS")
    with GateProgress(1, "tty", tty) as progress:
        progress.start("baseline")
        progress.finished("g", "cpu-emulated", "PASS")
    assert quiet.getvalue() == "" and "[1/1]" not in tty.getvalue()


def test_after_the_last_gate_the_log_says_what_is_being_written_and_closed_before_the_table(tmp_path: Path,
                                                                                           capsys) -> None:
    project = write_project(tmp_path / "p")
    run_gates([gate("green", kind="replay")], project=project, options=RunOptions(progress=None),
              materializer=catalog_materializer(MUTATIONS), stdout=io.StringIO(), launcher=shared_server())
    err = capsys.readouterr().err.splitlines()
    last_gate = max(i for i, line in enumerate(err) if line.startswith("[1/1]"))
    after = err[last_gate + 1:]
    assert any(line.startswith("seamgate: stopping the run's processes and removing its copies") for line in after), err
    assert any(line.startswith("seamgate: writing the reports and the kept results into ") for line in after), err


def test_with_progress_off_nothing_is_said_after_the_last_gate(tmp_path: Path, capsys) -> None:
    project = write_project(tmp_path / "p")
    run_gates([gate("green", kind="replay")], project=project, options=RunOptions(progress=False),
              materializer=catalog_materializer(MUTATIONS), stdout=io.StringIO(), launcher=shared_server())
    assert "seamgate: " not in capsys.readouterr().err


def test_before_the_first_gate_the_log_says_what_starts_and_when_the_baselines_run(tmp_path: Path, capsys) -> None:
    # issue 27: the bundled suite's first progress line came ~20 s in, after the baselines; a CI log must not
    # look hung while the fork server starts and the baselines run.
    project = write_project(tmp_path / "p")
    run_gates([gate("green", kind="replay")], project=project, options=RunOptions(progress=None),
              materializer=catalog_materializer(MUTATIONS), stdout=io.StringIO(), launcher=shared_server())
    err = capsys.readouterr().err.splitlines()
    first_gate = min(i for i, line in enumerate(err) if line.startswith("[1/1]"))
    before = err[:first_gate]
    assert before and before[0].startswith("seamgate: judging 1 gate: "), err
    assert any(line.startswith("seamgate: running 1 baseline twice") for line in before), err
    assert any(line.startswith("seamgate: the baselines took ") for line in before), err
