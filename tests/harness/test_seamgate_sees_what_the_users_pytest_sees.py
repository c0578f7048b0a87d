"""A gate never PASSes on a baseline the user's own plain ``pytest`` cannot collect.

seamgate puts the project's import roots on the path of every run it starts; the user's ``pytest``
(the console script: no current folder on ``sys.path``) does not. A project laid out as a new user
lays one out (``pkg/`` at the root, ``tests/`` without ``__init__.py``, no ``pythonpath`` setting) fails
to collect under its own ``pytest``: seamgate says so, and the gate is an ERROR naming the file, the
error and the fix, never a PASS.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.exit_codes import ExitCode

FILES = {
    "pyproject.toml": "[project]\nname = 'fixture'\n\n[tool.seamgate]\ngates = ['gates']\ncatalog = ['mutations']\n",
    "pkg/__init__.py": "",
    "pkg/ops.py": "def add(a, b):\n    return a + b\n",
    "tests/test_ops.py": "from pkg.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "mutations/m.yaml": ("version: 1\nmutations:\n  - id: add-off\n    title: off by one\n    target: pkg/ops.py\n"
                         "    replace: {old: 'return a + b', new: 'return a + b + 1'}\n"),
    "gates/g.yaml": ("version: 1\ngates:\n  - {id: g-add, kind: rule, source: {mutation: add-off}, "
                     "select: [tests/test_ops.py],\n     expect: {red: {nodeids: ['tests/test_ops.py::test_add']}}}\n"),
}


@pytest.fixture(autouse=True)
def _a_users_pythonpath(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's shell: no empty entry on ``PYTHONPATH`` (one is the working folder, which would put the project on
    the path of both pytests; a device script's ``PYTHONPATH=/x:$PYTHONPATH`` with none set left one: H100, session
    22). seamgate and the user's pytest inherit the same environment."""
    entries = [e for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e]
    if entries:
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(entries))
    else:
        monkeypatch.delenv("PYTHONPATH", raising=False)


def write(root: Path, pythonpath: bool) -> Path:
    files = dict(FILES)
    if pythonpath:
        files["pyproject.toml"] += "\n[tool.pytest.ini_options]\npythonpath = ['.']\n"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def users_pytest(root: Path) -> int:
    """The user's ``pytest`` console script (``python -P``: the current folder is not on the path)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SEAM"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run([sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120).returncode


def test_a_baseline_the_users_own_pytest_cannot_collect_never_passes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write(tmp_path / "proj", pythonpath=False)
    assert users_pytest(root) == 2  # the premise: the user's own pytest cannot import pkg
    code = main(["--project", str(root), "run"])
    captured = capsys.readouterr()
    out = captured.out
    assert code == ExitCode.GATE_ERROR, out
    assert "│ ERROR" in out and "│ PASS" not in out and "PASS g-add" not in captured.err
    assert "your own pytest cannot collect tests/test_ops.py" in out and "pythonpath" in out


def test_with_pythonpath_set_both_agree_and_the_gate_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write(tmp_path / "proj", pythonpath=True)
    assert users_pytest(root) == 0
    assert main(["--project", str(root), "run"]) == ExitCode.OK, capsys.readouterr().out
