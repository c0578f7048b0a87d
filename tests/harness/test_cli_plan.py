"""Seeing before running: `seamgate run --dry-run`, `seamgate gates list`, `seamgate mutations reds ID`."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.exit_codes import ExitCode
from harness.gates.model import RedSet
from harness.cli.reds import armless, red_set_yaml, run_reds
from harness.run.runner import RunOptions, catalog_materializer, run_gates
from tests.reports.fixture_projects import CALC, catalog, gate, mutation, shared_server, write_project

ADD = "tests/test_add.py"
FILES = {
    **CALC,
    "pyproject.toml": "[tool.seamgate]\n",
    "mutations/catalog/calc.yaml": (
        "version: 1\nmutations:\n"
        "  - id: add-zero-is-one\n    title: add is wrong at zero\n    target: calc/ops.py\n"
        "    replace: {old: \"return a + b\", new: \"return a + b + (1 if 0 in (a, b) else 0)\"}\n"
    ),
    "gates/g.yaml": (
        "version: 1\ngates:\n"
        "  - {id: add-zero, kind: rule, source: {mutation: add-zero-is-one}, select: [tests],\n"
        "     expect: {red: {nodeids: ['tests/test_add.py::test_add_zero']}}}\n"
        "  - {id: all-green, kind: replay, select: [tests/test_mul.py]}\n"
    ),
}
MUTATIONS = catalog(mutation("add-zero-is-one", "return a + b", "return a + b + (1 if 0 in (a, b) else 0)"))


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def test_dry_run_prints_the_rows_and_runs_and_writes_nothing(tmp_path: Path, capsys) -> None:
    root = write_project(tmp_path / "p", FILES)
    code, text = cli(capsys, "--project", str(root), "run", "--dry-run")
    assert code == ExitCode.OK
    assert "plan: 2 checks of 2 gates; 2 rows" in text
    assert "working tree cpu-emulated" in text and "mutation add-zero-is-one cpu-emulated" in text
    assert "estimated time: unknown" in text
    assert not (root / ".seamgate").exists()


def test_after_a_run_the_dry_run_says_how_many_cases_would_run_and_be_inferred(tmp_path: Path, capsys) -> None:
    root = write_project(tmp_path / "p", FILES)
    run_gates([gate("add-zero", mutation="add-zero-is-one", red=RedSet(nodeids=(f"{ADD}::test_add_zero",)))],
              project=root, options=RunOptions(progress=False), materializer=catalog_materializer(MUTATIONS),
              stdout=io.StringIO(), launcher=shared_server())
    code, text = cli(capsys, "--project", str(root), "run", "--dry-run", "--gate", "add-zero")
    assert code == ExitCode.OK
    assert "mutation add-zero-is-one cpu-emulated: 3 cases, run 2, inferred 1" in text
    assert "estimated time: ~" in text
    code, text = cli(capsys, "--project", str(root), "run", "--dry-run", "--gate", "add-zero", "--prove")
    assert "mutation add-zero-is-one cpu-emulated: 3 cases, run 3, inferred 0" in text


def test_gates_list_prints_every_gate_with_its_kind_source_and_place(tmp_path: Path, capsys) -> None:
    root = write_project(tmp_path / "p", FILES)
    code, text = cli(capsys, "--project", str(root), "gates", "list")
    assert code == ExitCode.OK
    row = next(line for line in text.splitlines() if "add-zero " in line)
    assert "rule" in row and "mutation add-zero-is-one" in row and "gates/g.yaml:3" in row


def test_reds_prints_the_red_set_in_the_form_a_gate_expects(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", FILES)
    code, red, _ = run_reds(root, MUTATIONS, "add-zero-is-one", ("tests",), launcher=shared_server())
    assert code == ExitCode.OK and [c.nodeid for c in red] == [f"{ADD}::test_add_zero"]
    text = red_set_yaml("add-zero-is-one", ("tests",), red)
    assert '      - "tests/test_add.py::test_add_zero"\n' in text
    assert "  counts: {cases: 1, passed: 0, failed: 1}" in text
    assert armless("t.py::test_x[cpu-emulated-3]") == "t.py::test_x[{arm}-3]" and armless("t.py::a") == "t.py::a"


def test_reds_of_a_mutation_no_gate_names_asks_for_a_selection(tmp_path: Path, capsys) -> None:
    files = {**FILES, "gates/g.yaml": "version: 1\ngates:\n  - {id: all-green, kind: replay, select: [tests]}\n"}
    root = write_project(tmp_path / "p", files)
    code, text = cli(capsys, "--project", str(root), "mutations", "reds", "add-zero-is-one")
    assert code == ExitCode.USAGE_ERROR and "--select" in text


def test_the_dry_run_reads_the_newest_kept_run_that_holds_each_rows_baseline_not_only_latest(tmp_path: Path, capsys) -> None:
    # A partial run in between (`--gate`, `--prove`, `mutations reds`) becomes `latest` without the
    # baseline (or the reach) another gate needs: the estimate comes from the older run that has it.
    root = write_project(tmp_path / "p", FILES)
    run_gates([gate("add-zero", mutation="add-zero-is-one", red=RedSet(nodeids=(f"{ADD}::test_add_zero",)))],
              project=root, options=RunOptions(progress=False), materializer=catalog_materializer(MUTATIONS),
              stdout=io.StringIO(), launcher=shared_server())
    code, _ = cli(capsys, "--project", str(root), "run", "--gate", "all-green")
    assert code == ExitCode.OK
    code, text = cli(capsys, "--project", str(root), "run", "--dry-run", "--gate", "add-zero")
    assert code == ExitCode.OK
    assert "mutation add-zero-is-one cpu-emulated: 3 cases, run 2, inferred 1" in text, text
    assert "estimated time: ~" in text
