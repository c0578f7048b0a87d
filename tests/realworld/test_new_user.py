"""As a new user on a real project (issue 15): what seamgate leaves behind must never end up in a commit.

seamgate keeps its lock and results in ``.seamgate/`` inside the project. A user who never added it
to their ``.gitignore`` ran ``git add -A`` and committed ``.seamgate/run.lock``. The folder now
ignores itself (``.seamgate/.gitignore`` holding ``*``, as pytest's own cache folder does); the
user's files, ``.gitignore`` included, are not touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.results.lock import RepositoryLock
from harness.results.workspace import runs_root
from tests.realworld.projects import GIT_ENV, write


def git(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, check=True, capture_output=True, text=True,
                          env={**GIT_ENV, "HOME": str(project.parent)}).stdout


@pytest.mark.parametrize("make", ["lock", "runs"])
def test_the_folder_seamgate_writes_into_a_project_ignores_itself(tmp_path: Path, make: str) -> None:
    project = write(tmp_path, "flatpkg")
    if make == "lock":
        with RepositoryLock(project):
            pass
    else:
        (runs_root(project) / "x.json").write_text("{}")
    assert git(project, "status", "--porcelain") == ""
    git(project, "add", "-A")
    assert git(project, "diff", "--cached", "--name-only") == ""
    assert not (project / ".gitignore").exists()


def test_a_gitignore_the_user_wrote_in_the_folder_is_kept(tmp_path: Path) -> None:
    project = write(tmp_path, "flatpkg")
    (project / ".seamgate").mkdir()
    (project / ".seamgate" / ".gitignore").write_text("runs/\n")
    with RepositoryLock(project):
        pass
    assert (project / ".seamgate" / ".gitignore").read_text() == "runs/\n"


@pytest.mark.slow
def test_after_seamgate_run_git_add_all_commits_nothing_of_seamgates(tmp_path: Path) -> None:
    project = write(tmp_path, "flatpkg")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SEAM_", "PYTHON"))}
    done = subprocess.run([sys.executable, "-m", "harness.cli.main", "--project", str(project), "run"], cwd=project,
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / ".seamgate" / "runs").is_dir()
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""


#: A project that never asks for seamgate's fixture but has its OWN ``backend`` fixture and ``arm`` marker.
OWN_NAMES = {
    "pyproject.toml": "[tool.pytest.ini_options]\nmarkers = [\"arm(side): which robot arm\"]\n",
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef backend():\n    return 'sqlite'\n",
    "tests/test_own.py": (
        "import sys\n\nimport pytest\n\n\n"
        "def test_db(backend):\n    assert backend == 'sqlite'\n\n\n"
        "@pytest.mark.arm('left')\ndef test_left_arm():\n    assert True\n\n\n"
        "def test_nothing_of_seamgates_was_imported():\n"
        "    assert 'torch' not in sys.modules and 'seam' not in sys.modules\n"
    ),
}


def test_a_projects_own_backend_fixture_and_arm_marker_are_left_alone_by_the_installed_plugin(tmp_path: Path) -> None:
    """Installing seamgate must not change anyone's suite: its ``pytest11`` plugin parametrizes only ITS
    ``backend`` fixture, and handles only ``arm`` markers naming one of its arms."""
    project = tmp_path / "own"
    for rel, text in OWN_NAMES.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SEAM_", "PYTHON"))}

    def session(*extra: str) -> tuple[int, str]:
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", *extra], cwd=project,
                              capture_output=True, text=True, env=env, timeout=120)
        ids = sorted(line.split(" ")[0] for line in done.stdout.splitlines() if "::" in line and " PASSED" in line)
        return done.returncode, "\n".join(ids) + "\n" + done.stdout[-1500:] * (done.returncode != 0)

    installed, blocked = session(), session("-p", "no:seamgate")
    assert blocked == (0, "tests/test_own.py::test_db\ntests/test_own.py::test_left_arm\n"
                          "tests/test_own.py::test_nothing_of_seamgates_was_imported\n")
    assert installed == blocked


def test_a_project_that_asks_for_seamgates_backend_and_arms_still_gets_them(tmp_path: Path) -> None:
    """The control: the entry-point plugin alone (no seam plugin in the session) parametrizes ITS fixture
    over the arms and handles ``@pytest.mark.arm('cuda')`` (OWED without a GPU)."""
    pytest.importorskip("torch", reason="the seam needs torch (the [seam] extra; installed by the test extra)")
    project = tmp_path / "uses"
    (project / "tests").mkdir(parents=True)
    (project / "tests/test_seam.py").write_text(
        "import pytest\n\n\ndef test_backend(backend):\n    assert backend is not None\n\n\n"
        "@pytest.mark.arm('cuda')\ndef test_cuda_only():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SEAM_", "PYTHON"))}
    env["SEAM_ARMS"] = "cpu-emulated"
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA"], cwd=project,
                          capture_output=True, text=True, env=env, timeout=300)
    assert "PASSED tests/test_seam.py::test_backend[cpu-emulated]" in done.stdout, done.stdout + done.stderr
    assert "1 passed, 1 deselected" in done.stdout, done.stdout
