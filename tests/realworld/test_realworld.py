"""`seamgate run` on three real-layout projects gives exactly each one's red set; the copy's code is what ran."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.realworld.projects import RED, install_editable, make_venv, write

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_venv(tmp_path_factory.mktemp("venv") / "v")


def seamgate_run(python: Path, project: Path) -> tuple[int, dict, str]:
    out = project.parent / f"{project.name}.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SEAM_", "PYTHON"))}
    done = subprocess.run([str(python), "-m", "harness.cli.main", "run", "--project", str(project), "--json", str(out)],
                          cwd=project, capture_output=True, text=True, env=env, timeout=400)
    report = json.loads(out.read_text()) if out.is_file() else {}
    return done.returncode, report, done.stdout + done.stderr


def gate_outcome(report: dict) -> dict:
    [outcome] = [o for o in report["outcomes"] if o["gate"] == "add-rule"]
    return outcome


def red_of(outcome: dict) -> list[str]:
    [run] = outcome["runs"]
    return sorted(c["nodeid"] for c in run["cases"] if c["kind"] == "failed")


@pytest.mark.parametrize("name", ["srcpkg", "flatpkg", "cfgpkg"])
def test_seamgate_run_gives_exactly_the_known_red_set(tmp_path: Path, venv: Path, name: str) -> None:
    project = write(tmp_path, name)
    if name == "srcpkg":
        install_editable(venv, project)  # its .pth now puts the ORIGINAL src/ on every sys.path
    code, report, text = seamgate_run(venv, project)
    assert code == 0, text
    outcome = gate_outcome(report)
    assert outcome["verdict"] == "PASS", text
    assert red_of(outcome) == RED, text


def test_the_src_layout_gate_is_an_error_when_the_copys_code_is_not_what_ran(
        tmp_path: Path, venv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check, with the copy-first import roots taken away (the code before issue 15 did this):
    the editable .pth wins, the ORIGINAL src/srcpkg is imported, and the gate must say so: ERROR."""
    import harness.rows.executor as executor
    from harness.rows.forkserver import ForkServer
    from harness.project import Project
    from harness.run.runner import RunOptions, catalog_materializer, run_gates
    from harness.gates.gatefile import load_gate_files

    project = write(tmp_path, "srcpkg")
    install_editable(venv, project)
    monkeypatch.setattr(executor, "_front", lambda tree: {"path_front": [str(tree)] if tree else [], "claim": []})
    proj = Project.locate(project)
    catalog = proj.catalog()
    gates = load_gate_files([project / "gates"], project_root=project, catalog=catalog)
    options = RunOptions(prefer_fork=True)
    with ForkServer(python=str(venv)) as server:
        report, code = run_gates(gates, project=project, options=options, materializer=catalog_materializer(catalog),
                                 launcher=server, stdout=open(os.devnull, "w"))
    verdicts = {o.verdict.value for o in report.outcomes} | {"BASELINE_RED" if report.baseline_red else ""}
    messages = " ".join([o.message for o in report.outcomes] + [c.message for r in report.baseline_red for c in r.cases])
    assert "PASS" not in verdicts and "FAIL" not in verdicts, messages
    assert "the copy's code is not what ran" in messages and "srcpkg" in messages
    assert str(project / "src" / "srcpkg") in messages


def test_without_torch_seamgate_runs_a_project_that_has_no_seam_tests_and_its_own_pytest_is_unchanged(
        tmp_path: Path) -> None:
    """torch hidden in the venv (``import torch`` fails as if not installed): the engine, the fork server
    and the reports still work, and the project's own pytest under ``filterwarnings = error`` passes."""
    python = make_venv(tmp_path / "v", without_torch=True)
    check = subprocess.run([str(python), "-c", "import torch"], capture_output=True, text=True)
    assert "No module named 'torch'" in check.stderr
    project = write(tmp_path, "flatpkg")
    own = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project,
                         capture_output=True, text=True, timeout=120)
    assert own.returncode == 0 and "3 passed" in own.stdout, own.stdout + own.stderr
    code, report, text = seamgate_run(python, project)
    assert code == 0, text
    assert gate_outcome(report)["verdict"] == "PASS" and red_of(gate_outcome(report)) == RED, text
