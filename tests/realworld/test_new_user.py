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

from harness.lock import RepositoryLock
from harness.workspace import runs_root
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
    done = subprocess.run([sys.executable, "-m", "harness.cli", "--project", str(project), "run"], cwd=project,
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / ".seamgate" / "runs").is_dir()
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""
