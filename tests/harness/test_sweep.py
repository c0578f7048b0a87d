"""`seamgate sweep`: every mutant mutmut generates, run through our executor without fail-fast.

A tiny fixture project (written by the tests, not a git repository) holds one of each: a mutant two
tests kill, a survivor, a function no test runs, a function run at import time, and a reviewed
equivalent. The sweep runs once per module (the shared fork server); the re-run and error tests
run their own.
"""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

pytest.importorskip("mutmut", reason="mutmut 3 is in the test extra (pip install -e '.[test]')")

from harness.cli.main import main  # noqa: E402
from harness.exit_codes import ExitCode  # noqa: E402
from harness.sweep.sweep import BaselineRed, Sweep, SweepOptions  # noqa: E402
from harness.sweep.equivalents import load_equivalents  # noqa: E402
from reports.mutants import SweepResult  # noqa: E402
from tests.reports.fixture_projects import shared_server, write_project  # noqa: E402

pytestmark = pytest.mark.slow

OPS = (
    "def add(a, b):\n"
    "    return a + b\n"
    "\n\n"
    "def half(x):\n"
    "    return x // 2\n"
    "\n\n"
    "def unused(x):\n"
    "    return x - 7\n"
    "\n\n"
    "def scale():\n"
    "    return 3\n"
    "\n\n"
    "FACTOR = scale()\n"
    "\n\n"
    "def times(a):\n"
    "    return a * FACTOR\n"
)
PROJECT = {
    "pyproject.toml": "[tool.seamgate]\n",
    "calc/__init__.py": "",
    "calc/ops.py": OPS,
    "tests/__init__.py": "",
    "tests/test_ops.py": (
        "from calc.ops import add, half, times\n\n\n"
        "def test_add_small():\n    assert add(1, 2) == 3\n\n\n"
        "def test_add_negative():\n    assert add(-1, -2) == -3\n\n\n"
        # 4 // 2 == 4 / 2: mutmut's `x / 2` survives this test
        "def test_half():\n    assert half(4) == 2\n\n\n"
        "def test_times():\n    assert times(2) == 6\n"
    ),
}
SURVIVOR = "calc.ops.x_half__mutmut_1"
EQUIVALENTS = (
    "version: 1\nequivalent:\n"
    f"  - mutant: {SURVIVOR}\n    line: \"return x / 2\"\n    reason: reviewed for the test\n"
)


def sweep(root: Path, **options: object) -> SweepResult:
    values = {"paths": (str(root / "calc"),), "jobs": 2, "progress": "off", **options}
    return Sweep(root, SweepOptions(**values), launcher=shared_server()).run()  # type: ignore[arg-type]


def by_id(result: SweepResult) -> dict[str, object]:
    return {m.id: m for m in result.mutants}


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SweepResult]:
    root = write_project(tmp_path_factory.mktemp("sweep") / "calc", PROJECT)
    return root, sweep(root, all_killers=True)  # the full kill matrix: every killer of a mutant


def test_a_killed_mutant_lists_every_test_that_kills_it_not_the_first(swept: tuple[Path, SweepResult]) -> None:
    _, result = swept
    minus = [m for m in result.mutants if m.id.startswith("calc.ops.x_add__mutmut_") and "a - b" in m.diff]
    assert len(minus) == 1
    assert minus[0].status == "killed"
    assert minus[0].killers == ("tests/test_ops.py::test_add_small", "tests/test_ops.py::test_add_negative")
    # only the cases reaching add() ran; the other two were taken from the baseline
    assert set(minus[0].covered_by) == set(minus[0].killers)
    assert minus[0].inferred == 2


def test_a_survivor_is_reported_with_its_file_line_and_diff(swept: tuple[Path, SweepResult]) -> None:
    _, result = swept
    alive = [m for m in result.mutants if m.status == "survived"]
    assert [(m.file, m.line) for m in alive] == [("calc/ops.py", 6)]
    assert "-    return x // 2\n+    return x / 2\n" in alive[0].diff
    assert alive[0].covered_by == ("tests/test_ops.py::test_half",)


def test_an_unreachable_mutant_is_no_coverage_and_never_runs(swept: tuple[Path, SweepResult]) -> None:
    _, result = swept
    unused = [m for m in result.mutants if "x_unused" in m.id]
    assert unused and {m.status for m in unused} == {"no_coverage"}
    assert all(m.covered_by == () and m.wall == 0.0 and m.inferred == 4 for m in unused)
    assert result.facts["ran"] == len([m for m in result.mutants if m.status != "no_coverage"])


def test_a_function_run_at_import_is_swept_in_a_session_of_its_own(swept: tuple[Path, SweepResult]) -> None:
    _, result = swept
    (scale,) = [m for m in result.mutants if "x_scale" in m.id]
    # switched on after collection, a trampoline could never change FACTOR: this one ran on plain source
    assert scale.status == "killed"
    assert scale.killers == ("tests/test_ops.py::test_times",)


def test_the_score_counts_detected_over_scored(swept: tuple[Path, SweepResult]) -> None:
    _, result = swept
    detected, scored = result.counted()
    assert (detected, scored) == (len(result.of_status("killed")), len(result.mutants))
    assert scored - detected == len(result.of_status("survived", "no_coverage"))


def test_equivalent_entries_leave_the_denominator_and_are_listed_apart(tmp_path: Path,
                                                                        swept: tuple[Path, SweepResult]) -> None:
    root, first = swept
    (tmp_path / "eq.yaml").write_text(EQUIVALENTS)
    result = sweep(root, equivalents=load_equivalents(tmp_path / "eq.yaml"))
    assert by_id(result)[SURVIVOR].status == "equivalent"
    assert by_id(result)[SURVIVOR].reason == "reviewed for the test"
    assert result.counted() == (first.counted()[0], first.counted()[1] - 1)


def test_an_equivalence_entry_whose_line_changed_is_stale_and_the_mutant_survives(
        tmp_path: Path, swept: tuple[Path, SweepResult]) -> None:
    root, _ = swept
    (tmp_path / "eq.yaml").write_text(EQUIVALENTS.replace("return x / 2", "return x // 3"))
    result = sweep(root, equivalents=load_equivalents(tmp_path / "eq.yaml"))
    survivor = by_id(result)[SURVIVOR]
    assert survivor.status == "survived"
    assert "STALE" in survivor.reason and "eq.yaml:3" in survivor.reason


def test_a_rerun_retests_only_the_mutants_whose_code_or_reaching_tests_changed(tmp_path: Path) -> None:
    root = write_project(tmp_path / "calc", PROJECT)
    first = sweep(root)
    again = sweep(root)
    assert again.facts["ran"] == 0 and again.facts["reused"] == first.facts["ran"]
    assert [(m.id, m.status, m.killers) for m in again.mutants] == [(m.id, m.status, m.killers) for m in first.mutants]
    # a one-line change in times(): its mutant and the import-time one (it runs every case) re-run
    ops = root / "calc" / "ops.py"
    ops.write_text(OPS.replace("    return a * FACTOR\n", "    result = a * FACTOR\n    return result\n"))
    third = sweep(root)
    rerun = {m.id for m in third.mutants if m.wall > 0}  # a reused outcome took no time
    times = {m.id for m in third.mutants if "x_times__" in m.id}
    assert rerun == times | {"calc.ops.x_scale__mutmut_1"}  # scale() runs at import: it reads every file
    assert third.facts["ran"] == len(rerun)
    # --fresh forgets every kept outcome
    fresh = sweep(root, fresh=True)
    assert fresh.facts["reused"] == 0


def test_show_prints_one_mutant_with_every_killer_and_its_diff(tmp_path: Path,
                                                                swept: tuple[Path, SweepResult]) -> None:
    from harness.sweep.cli import keep

    root, result = swept
    kept = root / ".seamgate" / "runs" / "20990101T000000Z-1"
    kept.mkdir(parents=True, exist_ok=True)
    keep(root, kept, result, ExitCode.OK, latest=True)
    data = json.loads((kept / "outcomes.json").read_text())
    assert data["sweep"]["scored"] == result.counted()[1]
    code, out, _ = run_cli(["--project", str(root), "sweep", "--show", "x_add__mutmut_1"])
    assert code == ExitCode.OK
    assert "KILLED" in out and "tests/test_ops.py::test_add_small" in out and "tests/test_ops.py::test_add_negative" in out
    assert "+    return a - b" in out
    code, _, err = run_cli(["--project", str(root), "sweep", "--show", "x_nothing__mutmut_9"])
    assert code == ExitCode.USAGE_ERROR and "no such mutant" in err


def test_show_reads_the_sweep_kept_in_the_output_folder_it_is_given(tmp_path: Path,
                                                                    swept: tuple[Path, SweepResult]) -> None:
    """A sweep run with ``--output DIR`` keeps its outcomes there and moves no ``latest-sweep`` link: ``--show``
    with the same ``--output`` reads them (it said "no kept sweep" and named the default folder)."""
    from harness.sweep.cli import keep

    root, result = swept
    kept = tmp_path / "chosen"
    kept.mkdir()
    keep(root, kept, result, ExitCode.OK, latest=False)
    code, out, err = run_cli(["--project", str(root), "sweep", "--output", str(kept), "--show", "x_add__mutmut_1"])
    assert (code, err) == (ExitCode.OK, "") and "KILLED" in out and "+    return a - b" in out
    code, _, err = run_cli(["--project", str(root), "sweep", "--output", str(tmp_path / "none"), "--show", "x_add"])
    assert code == ExitCode.USAGE_ERROR and f"no kept sweep in {tmp_path / 'none'}" in err


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_a_path_outside_the_project_is_a_usage_error(tmp_path: Path) -> None:
    root = write_project(tmp_path / "calc", PROJECT)
    code, _, err = run_cli(["--project", str(root), "sweep", str(tmp_path)])
    assert code == ExitCode.USAGE_ERROR
    assert "outside the project" in err and "Traceback" not in err


def test_a_scope_without_python_files_is_a_usage_error(tmp_path: Path) -> None:
    root = write_project(tmp_path / "calc", {**PROJECT, "docs/readme.txt": "no code\n"})
    code, _, err = run_cli(["--project", str(root), "sweep", str(root / "docs")])
    assert code == ExitCode.USAGE_ERROR
    assert "no Python files in" in err


def test_without_mutmut_the_sweep_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    root = write_project(tmp_path / "calc", PROJECT)
    monkeypatch.setitem(sys.modules, "mutmut", None)  # `import mutmut` raises ImportError
    code, _, err = run_cli(["--project", str(root), "sweep", str(root / "calc")])
    assert code == ExitCode.ENVIRONMENT
    assert 'pip install "mutmut>=3.8"' in err


def test_a_red_baseline_stops_the_sweep_naming_the_red_case(tmp_path: Path) -> None:
    tests = PROJECT["tests/test_ops.py"] + "\n\ndef test_broken():\n    assert add(2, 2) == 5\n"
    root = write_project(tmp_path / "calc", {**PROJECT, "tests/test_ops.py": tests})
    with pytest.raises(BaselineRed, match="test_broken"):
        sweep(root)
    shutil.rmtree(root / ".seamgate", ignore_errors=True)
    code, _, err = run_cli(["--project", str(root), "sweep", str(root / "calc")])
    assert code == ExitCode.BASELINE_RED
    assert "BASELINE RED" in err and "tests/test_ops.py::test_broken" in err


def test_a_bad_equivalents_file_is_refused_naming_the_entry(tmp_path: Path) -> None:
    from harness.errors import ConfigError

    (tmp_path / "eq.yaml").write_text("version: 1\nequivalent:\n  - mutant: a.x_f__mutmut_1\n    reason: r\n")
    with pytest.raises(ConfigError, match=r"eq.yaml:3: entry 1 lacks line"):
        load_equivalents(tmp_path / "eq.yaml")


def test_two_sweeps_of_one_project_keep_each_others_outcomes(tmp_path: Path) -> None:
    # each sweep keeps its rows in its own run folder as its batches end; the next looks in every kept folder
    from harness.results.workspace import new_kept_folder
    from harness.sweep.kept_outcomes import KeptOutcomes

    first = KeptOutcomes(tmp_path, new_kept_folder(tmp_path), {}, fresh=False)
    second = KeptOutcomes(tmp_path, new_kept_folder(tmp_path), {}, fresh=False)
    first.keep_mutant("m.a", "a" * 64, {"status": "killed"})
    second.keep_mutant("m.b", "b" * 64, {"status": "survived"})
    first.save()
    second.save()
    third = KeptOutcomes(tmp_path, new_kept_folder(tmp_path), {}, fresh=False)
    assert (third.mutant("m.a", "a" * 64), third.mutant("m.b", "b" * 64)) == ({"status": "killed"}, {"status": "survived"})
    assert third.mutant("m.a", "c" * 64) is None  # another digest: something it read changed
    assert KeptOutcomes(tmp_path, new_kept_folder(tmp_path), {}, fresh=True).mutant("m.a", "a" * 64) is None


def test_a_sweep_keeps_its_baseline_and_outcomes_as_rows_of_its_run_folder(tmp_path: Path) -> None:
    """One store for gate runs and sweeps (issue 25): rows.json of the kept run folder, looked up through KeptRuns;
    a sweep that took everything again keeps it all again, so it outlives the folders it took it from."""
    from harness.results.reuse import KeptRuns
    from harness.results.workspace import slug

    root = write_project(tmp_path / "calc", PROJECT)
    first = sweep(root)
    assert not (root / ".seamgate" / "sweep-cache").exists()
    (folder,) = KeptRuns.read(root).runs
    rows = json.loads((folder.folder / "rows.json").read_text(encoding="utf-8"))["rows"]
    decided = {m.id for m in first.mutants if m.status != "no_coverage"}
    assert {label.removeprefix("sweep mutant ") for label in rows if label.startswith("sweep mutant ")} == decided
    (baseline,) = [label for label in rows if not label.startswith("sweep mutant ")]
    assert baseline.startswith("sweep ") and (folder.folder / f"reach-{slug(baseline.removeprefix('sweep '))}.json").is_file()
    again = sweep(root)
    assert again.facts["ran"] == 0
    shutil.rmtree(folder.folder)  # the first sweep's folder goes (pruned): the second's holds what it took
    third = sweep(root)
    assert third.facts["ran"] == 0 and third.facts["reused"] == first.facts["ran"]
    assert [(m.id, m.status, m.killers) for m in third.mutants] == [(m.id, m.status, m.killers) for m in first.mutants]


def test_a_sweep_kept_in_an_output_folder_finds_its_rows_there_again(tmp_path: Path) -> None:
    # --output DIR is not under .seamgate/runs; a sweep given the same DIR again takes its rows from there
    root = write_project(tmp_path / "calc", PROJECT)
    first = sweep(root, output=tmp_path / "out")
    assert (tmp_path / "out" / "rows.json").is_file()
    again = sweep(root, output=tmp_path / "out")
    assert again.facts["ran"] == 0 and again.facts["reused"] == first.facts["ran"]
