"""What a copy holds (issue 15): git's files, never an untracked virtual environment or .seamgate/, plus configured ignored files."""

from __future__ import annotations

from pathlib import Path

from harness.project_copy import materialize, project_files
from tests.reports.fixture_projects import git, write_project

FILES = {
    "pyproject.toml": "[tool.seamgate]\ncopy_include = ['src/pkg/_version.py']\ncopy_exclude = ['data/*.bin']\n",
    ".gitignore": "_version.py\n",
    "src/pkg/__init__.py": "from pkg._version import VERSION\n",
    "src/pkg/_version.py": "VERSION = '1.2'\n",
    "tests/test_v.py": "def test_v():\n    pass\n",
    "data/big.bin": "x",
    "data/keep.txt": "k",
    ".venv/pyvenv.cfg": "home = /usr\n",
    ".venv/lib/python3.11/site-packages/huge.py": "",
    "venv/lib/x.py": "",
    "env312/pyvenv.cfg": "home = /usr\n",
    "env312/lib/y.py": "",
    "tools/site-packages/z.py": "",
    ".seamgate/run.lock": "123",
    ".seamgate/runs/latest/outcomes.json": "{}",
    "notes.txt": "untracked, not ignored: copied",
}


def project(tmp_path: Path) -> Path:
    root = write_project(tmp_path / "p", FILES)
    git(root, "init", "-q")
    git(root, "add", "pyproject.toml", ".gitignore", "src/pkg/__init__.py", "tests/test_v.py", "data")
    git(root, "commit", "-qm", "init")
    return root


def test_a_copy_holds_git_files_and_configured_ignored_ones_but_no_environment_and_no_seamgate(tmp_path: Path) -> None:
    files = project_files(project(tmp_path))
    assert files == [".gitignore", "data/keep.txt", "notes.txt", "pyproject.toml", "src/pkg/__init__.py",
                     "src/pkg/_version.py", "tests/test_v.py"]


def test_the_materialized_copy_has_the_generated_version_file(tmp_path: Path) -> None:
    root = project(tmp_path)
    dest = materialize(root, tmp_path / "copy", None)
    assert (dest / "src/pkg/_version.py").read_text() == "VERSION = '1.2'\n"
    assert not (dest / ".venv").exists() and not (dest / ".seamgate").exists()


def test_outside_git_the_walk_skips_environments_and_seamgate(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", FILES)
    files = project_files(root)
    assert not [f for f in files if f.startswith((".venv/", "venv/", "env312/", ".seamgate/"))]
    assert "src/pkg/_version.py" in files and "data/big.bin" not in files


def test_a_folder_named_in_copy_include_is_copied_whole_as_its_glob_would_be(tmp_path: Path) -> None:
    # `copy_include = ["toolz.egg-info"]` used to copy nothing (only `toolz.egg-info/*` worked).
    files = {"pyproject.toml": "[tool.seamgate]\ncopy_include = ['toolz.egg-info']\n", ".gitignore": "*.egg-info/\n",
             "toolz/__init__.py": "", "toolz.egg-info/PKG-INFO": "Name: toolz\n",
             "toolz.egg-info/entry_points.txt": "", "toolz.egg-info/sub/x.txt": ""}
    root = write_project(tmp_path / "p", files)
    git(root, "init", "-q")
    git(root, "add", "pyproject.toml", ".gitignore", "toolz/__init__.py")
    git(root, "commit", "-qm", "init")
    assert [f for f in project_files(root) if f.startswith("toolz.egg-info")] == [
        "toolz.egg-info/PKG-INFO", "toolz.egg-info/entry_points.txt", "toolz.egg-info/sub/x.txt"]
