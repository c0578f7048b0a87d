"""`seamgate validate` end to end: OK with counts, or every problem with file:line:col and exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.exit_codes import ExitCode

FILES = {
    "pyproject.toml": "[project]\nname = 'fixture'\n\n[tool.seamgate]\ngates = ['gates']\n",
    "seam/scope.py": "def close(scope):\n    scope.join()\n    scope.end()\n",
    "tests/seam/test_scope.py": "def test_join(): pass\n",
    "mutations/catalog/core.yaml": (
        "version: 1\nmutations:\n"
        "  - id: seam-no-auto-join\n    title: drop the join\n    target: seam/scope.py\n"
        "    delete: \"    scope.join()\\n\"\n"
    ),
    "gates/g3.yaml": (
        "version: 1\ngates:\n"
        "  - {id: g3-join, kind: rule, source: {mutation: seam-no-auto-join}, select: [tests/seam],\n"
        "     expect: {red: {nodeids: ['tests/seam/test_scope.py::test_join']}}}\n"
        "  - {id: g1-replay, kind: replay, select: [tests/seam], proof: {mutation: seam-no-auto-join}}\n"
    ),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed console script, run in the project (``python -m`` would let the fixture's own
    ``mutations/`` folder shadow our package through the current folder on sys.path)."""
    script = Path(sys.executable).parent / "seamgate"
    return subprocess.run([str(script), *args], cwd=project, capture_output=True, text=True, timeout=60)


def test_valid_gates_print_ok_with_the_gate_and_file_counts(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project", str(project), "validate"]) == ExitCode.OK
    assert capsys.readouterr().out == "OK: 2 gates in 1 file\n"


def test_the_project_is_found_from_the_current_folder(project: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(project / "seam")
    assert main(["validate"]) == ExitCode.OK
    assert "OK: 2 gates" in capsys.readouterr().out


def test_a_bad_gate_file_exits_usage_error_naming_file_line_column_and_key_without_traceback(project: Path) -> None:
    (project / "gates/bad.yaml").write_text("version: 1\ngates:\n  - id: g2-dense\n    kind: replay\n"
                                            "    select: [tests/seam]\n    expcet: {}\n")
    result = run(project, "validate")
    assert result.returncode == ExitCode.USAGE_ERROR
    assert result.stderr == ("seamgate: error: gates/bad.yaml:6:5: gate 'g2-dense': unknown key 'expcet' — did you "
                             "mean 'expect'? (allowed: id, kind, title, source, select, env, arms, timeout, expect, proof, "
                             "count_assertions, collection_errors_are_red, fingerprint, control, subject)\n")
    assert result.stdout == ""


def test_an_object_tag_is_refused_and_its_command_never_runs(project: Path) -> None:
    marker = project / "pwned"
    (project / "gates/evil.yaml").write_text(
        f"version: 1\ngates: !!python/object/apply:os.system ['touch {marker}']\n")
    result = run(project, "validate")
    assert result.returncode == ExitCode.USAGE_ERROR
    assert "gates/evil.yaml:2:8: YAML tag '!!python/object/apply:os.system' is refused" in result.stderr
    assert "Traceback" not in result.stderr and not marker.exists()


def test_duplicate_gate_ids_across_named_files_fail_validation(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "gates/copy.yaml").write_text("version: 1\ngates:\n  - {id: g1-replay, kind: replay, select: [tests/seam], proof: {mutation: seam-no-auto-join}}\n")
    code = main(["--project", str(project), "validate", str(project / "gates")])
    assert code == ExitCode.USAGE_ERROR
    assert "gates/g3.yaml:5:5: gate 'g1-replay': id already used at gates/copy.yaml:3:5" in capsys.readouterr().err


def test_a_bad_catalog_entry_fails_validation_with_its_position(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "mutations/catalog/more.yaml").write_text(
        "version: 1\nmutations:\n  - {id: x, title: t, target: seam/scope.py, delete: a, insert-after: {anchor: a, text: b}}\n")
    assert main(["--project", str(project), "validate"]) == ExitCode.USAGE_ERROR
    assert ("seamgate: error: mutations/catalog/more.yaml:3:57: mutation 'x': 2 operations (delete, insert-after)"
            in capsys.readouterr().err)


def test_an_unknown_key_in_the_seamgate_table_fails_naming_key_and_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with (project / "pyproject.toml").open("a") as handle:
        handle.write("job = 2\n")
    assert main(["--project", str(project), "validate"]) == ExitCode.USAGE_ERROR
    assert f"{project / 'pyproject.toml'}:6: [tool.seamgate]: unknown key 'job' — did you mean 'jobs'?" in capsys.readouterr().err


def test_a_project_folder_that_does_not_exist_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project", str(tmp_path / "nope"), "validate"]) == ExitCode.USAGE_ERROR
    assert "--project" in capsys.readouterr().err


def test_a_gate_on_the_working_tree_without_a_proof_is_refused_as_one_that_could_never_fail(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "gates/g1.yaml").write_text("version: 1\ngates:\n  - {id: g1-bare, kind: replay, select: [tests/seam]}\n")
    assert main(["--project", str(project), "validate"]) == ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert "gates/g1.yaml:3:5: gate 'g1-bare': judged only on the working tree" in err
    assert "could never fail" in err and "proof: {mutation: ID}" in err


def test_a_proof_on_a_mutation_gate_is_refused(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "gates/g3.yaml").write_text(
        "version: 1\ngates:\n  - {id: g3-x, kind: rule, source: {mutation: seam-no-auto-join}, select: [tests/seam],\n"
        "     proof: {mutation: seam-no-auto-join}, expect: {red: {count: 1}}}\n")
    assert main(["--project", str(project), "validate"]) == ExitCode.USAGE_ERROR
    assert "'proof' is for a gate judged on the working tree" in capsys.readouterr().err
