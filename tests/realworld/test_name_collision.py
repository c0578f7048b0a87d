"""A project with its own top-level ``reports``, ``harness``, ``mutations`` and ``drivers`` packages (the names
seamgate installs under, issue 25): its tests import THEIR packages in seamgate's runs, and seamgate still works."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realworld.projects import GIT_ENV

_OURS = "WHO = 'the user'\n"
PROJECT = {
    # pythonpath: the user's own `pytest` imports THEIR packages from the root (seamgate checks it can collect).
    "pyproject.toml": ("[tool.pytest.ini_options]\npythonpath = [\".\"]\n\n"
                       "[tool.seamgate]\ngates = [\"gates\"]\ncatalog = [\"mutations/catalog.yaml\"]\n"),
    "reports/__init__.py": _OURS,
    "reports/core.py": "def add(a, b):\n    return a + b\n",
    "harness/__init__.py": _OURS,
    "harness/rows.py": "ROWS = 'the user'\n",
    "mutations/__init__.py": _OURS,
    "drivers/__init__.py": _OURS,
    "mutations/catalog.yaml": ("version: 1\nmutations:\n  - id: add-subtracts\n    title: add subtracts\n"
                               "    target: reports/core.py\n    replace: {old: \"return a + b\", new: \"return a - b\"}\n"),
    "tests/test_core.py": (
        "import drivers, harness, mutations, reports\nfrom harness.rows import ROWS\nfrom reports.core import add\n\n\n"
        "def test_the_packages_are_the_users():\n"
        "    assert [m.WHO for m in (drivers, harness, mutations, reports)] == ['the user'] * 4 and ROWS == 'the user'\n\n\n"
        "def test_add():\n    assert add(1, 2) == 3\n"),
    "gates/rule.yaml": ("version: 1\ngates:\n  - id: add-rule\n    kind: rule\n    source: {mutation: add-subtracts}\n"
                        "    select: [tests]\n    expect: {red: {nodeids: [tests/test_core.py::test_add]}}\n"),
}


@pytest.mark.slow
def test_a_project_with_packages_named_as_seamgates_imports_its_own_and_is_gated(tmp_path: Path) -> None:
    project = tmp_path / "clash"
    for rel, text in PROJECT.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True, env={**GIT_ENV, "HOME": str(tmp_path)})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SEAM_", "PYTHON"))}
    seamgate = Path(sys.executable).parent / "seamgate"  # the installed command, as a user runs it
    done = subprocess.run([str(seamgate), "run", "--no-reuse"], cwd=project, capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "add-rule [cpu-emulated] PASS" in done.stdout, done.stdout


def test_runs_load_our_plugins_as_harness_unless_the_project_claims_that_name_for_a_package_of_its_own(
        tmp_path: Path) -> None:
    from harness.rows.executor import PRIVATE_HARNESS, plugin_package

    assert plugin_package(tmp_path) == "harness"  # no harness of its own: as always
    (tmp_path / "harness").mkdir()
    assert plugin_package(tmp_path) == "harness"  # a bare folder is no package: it yields to ours
    (tmp_path / "harness" / "__init__.py").write_text("")
    assert plugin_package(tmp_path) == PRIVATE_HARNESS
    assert plugin_package(Path(__file__).resolve().parents[2]) == "harness"  # seamgate's own tree: its own plugins
