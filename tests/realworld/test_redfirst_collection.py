"""Red-first with a test that imports the new feature: its collection error against the old commit is the red.

A two-commit git repository (``tests/realworld/projects.py``, ``write_feature``): ``tests/test_new.py``
does ``from featpkg import new_function``, which commit 1 lacks. Without ``collection_errors_are_red``
the gate is an ERROR (a collection error is never a red); with it, each case of the file (as collected
on the working tree) counts as red against ``HEAD~1``, and the gate passes with the exact counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realworld.projects import FEATURE_RED, write_feature

pytestmark = pytest.mark.slow


def seamgate(project: Path, *args: str) -> tuple[int, dict, str]:
    out = project.parent / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SEAM_", "PYTHON"))}
    extra = ["--json", str(out)] if args[0] == "run" else []
    done = subprocess.run([sys.executable, "-m", "harness.cli.main", "--project", str(project), *args, *extra],
                          cwd=project, capture_output=True, text=True, env=env, timeout=300)
    report = json.loads(out.read_text()) if out.is_file() else {}
    return done.returncode, report, done.stdout + done.stderr


def test_without_the_key_a_new_test_that_cannot_import_the_old_code_makes_the_gate_an_error(tmp_path: Path) -> None:
    project = write_feature(tmp_path)
    code, report, text = seamgate(project, "run")
    [outcome] = report["outcomes"]
    assert outcome["verdict"] == "ERROR", text
    assert "tests/test_new.py" in outcome["message"] and "ImportError" in outcome["message"], outcome["message"]
    assert code == 3, text


def test_collection_errors_are_red_makes_each_case_of_the_named_file_red_against_the_base_ref(tmp_path: Path) -> None:
    project = write_feature(tmp_path, extra="    collection_errors_are_red: [tests/test_new.py]\n")
    code, report, text = seamgate(project, "run")
    [outcome] = report["outcomes"]
    assert outcome["verdict"] == "PASS", text
    red_run, green_run = outcome["runs"]
    assert sorted(c["nodeid"] for c in red_run["cases"] if c["kind"] == "failed") == FEATURE_RED
    assert all("collection error" in c["message"] and "new_function" in c["message"]
               for c in red_run["cases"] if c["kind"] == "failed")
    assert "2 cases red by a collection error" in outcome["message"], outcome["message"]
    assert sorted(c["nodeid"] for c in green_run["cases"] if c["kind"] == "passed") == FEATURE_RED
    assert code == 0, text


def test_a_named_file_that_collects_against_the_old_code_is_judged_as_usual(tmp_path: Path) -> None:
    """The key only turns a COLLECTION error red: a file that imports fine and passes is still 'already green'."""
    project = write_feature(tmp_path, extra="    collection_errors_are_red: [tests/test_new.py]\n")
    (project / "tests/test_new.py").write_text("def test_doubles():\n    assert 2 * 2 == 4\n\n\n"
                                               "def test_zero():\n    assert 0 * 2 == 0\n")
    code, report, text = seamgate(project, "run")
    [outcome] = report["outcomes"]
    assert outcome["verdict"] == "FAIL" and "already green against the old code" in outcome["message"], text


def test_validate_refuses_the_key_on_a_gate_that_is_not_red_first(tmp_path: Path) -> None:
    project = write_feature(tmp_path, extra="    collection_errors_are_red: [tests/test_new.py]\n")
    gate = project / "gates/red_first.yaml"
    gate.write_text(gate.read_text().replace("kind: red-first", "kind: rule"))
    code, _, text = seamgate(project, "validate")
    assert code == 2 and "'collection_errors_are_red' is for kind 'red-first' only" in text, text
    assert "Traceback" not in text
