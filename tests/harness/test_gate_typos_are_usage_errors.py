"""A typo in a gate file is the gate file's mistake (USAGE_ERROR, naming file:line), never a broken gate.

An expected red node id pytest does not collect, or a ``select`` node id that does not exist, is found
by ``seamgate run`` from its baseline (no extra pytest session) and named with the gate file's
``file:line:col`` and the nearest collected ids; ``validate`` with no gate file checked nothing and
says so instead of ``OK: 0 gates``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.main import main
from harness.exit_codes import ExitCode

FILES = {
    "pyproject.toml": "[project]\nname = 'fixture'\n\n[tool.seamgate]\ngates = ['gates']\n\n[tool.pytest.ini_options]\npythonpath = ['.']\n",
    "seam/__init__.py": "",
    "seam/scope.py": "def close(scope):\n    return scope + 1\n",
    "tests/test_scope.py": (
        "from seam.scope import close\n\n"
        "def test_close():\n    assert close(1) == 2\n\n"
        "def test_other():\n    assert True\n"
    ),
    "mutations/catalog/core.yaml": (
        "version: 1\nmutations:\n"
        "  - id: close-off\n    title: off by one\n    target: seam/scope.py\n"
        "    replace: {old: 'return scope + 1', new: 'return scope + 2'}\n"
    ),
}

GOOD = ("version: 1\ngates:\n"
        "  - {id: g-close, kind: rule, source: {mutation: close-off}, select: [tests/test_scope.py],\n"
        "     expect: {red: {nodeids: ['tests/test_scope.py::test_close']}}}\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def seamgate(project: Path, *args: str) -> int:
    return main(["--project", str(project), *args])


def test_the_fixture_gate_passes_as_written(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "gates").mkdir()
    (project / "gates" / "g.yaml").write_text(GOOD)
    assert seamgate(project, "run") == ExitCode.OK, capsys.readouterr()


def test_an_expected_red_id_pytest_does_not_collect_is_a_usage_error_naming_file_line_and_near_ids(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "gates").mkdir()
    (project / "gates" / "g.yaml").write_text(GOOD.replace("::test_close'", "::test_closee'"))
    code = seamgate(project, "run")
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE_ERROR, err
    assert "gates/g.yaml:4:" in err and "tests/test_scope.py::test_closee" in err
    assert "tests/test_scope.py::test_close" in err  # the nearest collected id
    assert "expected red but not run" not in err


def test_a_select_id_that_does_not_exist_blames_the_gate_file_not_the_mutation(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "gates").mkdir()
    (project / "gates" / "g.yaml").write_text(
        GOOD.replace("select: [tests/test_scope.py]", "select: ['tests/test_scope.py::test_nope']"))
    code = seamgate(project, "run")
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert code == ExitCode.USAGE_ERROR, text
    assert "gates/g.yaml:3:" in text and "tests/test_scope.py::test_nope" in text
    assert "mutation close-off" not in text


def test_validate_with_no_gate_file_says_nothing_was_checked_and_is_not_ok(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = seamgate(project, "validate")
    captured = capsys.readouterr()
    assert code == ExitCode.NOTHING_JUDGED, captured
    assert "OK" not in captured.out
    assert "nothing" in (captured.out + captured.err).lower()
