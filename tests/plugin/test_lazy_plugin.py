"""Installing seamgate leaves a project's own pytest alone: the entry-point plugin imports no seam and no torch."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = [ep.value for ep in entry_points(group="pytest11") if ep.name == "seamgate"]

SUITE = {
    "pyproject.toml": "[tool.pytest.ini_options]\nfilterwarnings = ['error']\n",
    "test_plain.py": "def test_plain():\n    assert 1 + 1 == 2\n",
    "conftest.py": (
        "import sys\n\n\ndef pytest_sessionfinish(session):\n"
        "    print('LOADED', 'torch' in sys.modules, 'seam' in sys.modules)\n"
    ),
}


def _session(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    for name, text in SUITE.items():
        (tmp_path / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SEAM_"))}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *extra],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("plugin", PLUGINS or ["seamgate_plugin"])
def test_a_suite_that_never_asks_for_backend_imports_neither_seam_nor_torch(tmp_path: Path, plugin: str) -> None:
    extra = () if PLUGINS else ("-p", plugin)
    done = _session(tmp_path, *extra)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "LOADED False False" in done.stdout


def test_the_control_a_module_of_the_seam_does_import_torch(tmp_path: Path) -> None:
    # The probe sees torch when it is imported: a seam module that computes (seam.graph) loads it.
    done = _session(tmp_path, "-p", "seam.graph", "-W", "ignore")
    assert "LOADED True True" in done.stdout, done.stdout + done.stderr


def test_the_seams_own_plugin_imports_the_seam_but_not_torch(tmp_path: Path) -> None:
    # What the entry point pointed at before issue 15 imported seam and so torch; the seam's names now load
    # on first use (seam/__init__.py), so its plugin loads torch only when a case asks for ``backend``.
    done = _session(tmp_path, "-p", "seam.pytest_plugin", "-W", "ignore")
    assert "LOADED False True" in done.stdout, done.stdout + done.stderr


def test_the_entry_point_is_the_lazy_module() -> None:
    assert PLUGINS in ([], ["seamgate_plugin"])


def test_the_fork_server_preimports_not_this_projects_plugin() -> None:
    # Installed distributions' plugins it does load, through pytest's rewriting import
    # (tests/harness/test_forkserver_preloads_installed_plugins.py); the project's own, never.
    from tests.reports.fixture_projects import shared_server

    modules = shared_server().modules()
    assert "seamgate_plugin" not in modules and "seam" not in modules


@pytest.mark.parametrize("value", ["", "cpu-emulated", " cuda , cpu-emulated ", "rocm", "cpu-emulated,tpu"])
def test_the_lazy_plugin_reads_seam_arms_exactly_as_the_seams_own_plugin(value: str, monkeypatch) -> None:
    # seamgate_plugin keeps its own copy of the arm list and of SEAM_ARMS parsing (importing the seam's
    # plugin would import torch); this keeps the two copies from drifting apart.
    import seam.pytest_plugin as seams
    import seamgate_plugin as lazy

    assert lazy.KNOWN_ARMS == seams.KNOWN_ARMS
    monkeypatch.setenv("SEAM_ARMS", value)

    def outcome(module) -> object:
        try:
            return module.selected_arms()
        except pytest.UsageError as err:
            return str(err)

    assert outcome(lazy) == outcome(seams)
