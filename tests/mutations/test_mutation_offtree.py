"""Off-tree materialisation: the copy carries the mutation; the user's tree is never written."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from harness.project_copy import materialize, project_files
from mutations.errors import MutationRotError, MutationTargetError
from mutations.model import Location, Mutation

JOIN = "        self._join_outstanding_forks()\n"
SCOPE = f"class Scope:\n    def close(self):\n{JOIN}        self._end()\n"


def tree_hash(root: Path) -> str:
    """A hash over every path, file content and link target under ``root`` (``.git`` included)."""
    digest = hashlib.sha256()
    for folder, dirs, names in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder) / name
            digest.update(str(path.relative_to(root)).encode())
            digest.update(os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
    return digest.hexdigest()


def no_join(target: str = "seam/scope.py") -> Mutation:
    return Mutation(id="seam-no-auto-join", title="t", target=target, op="delete",
                    location=Location("c.yaml", 1, 1), anchor=JOIN)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for name, text in {"seam/scope.py": SCOPE, "tests/test_scope.py": "def test_x(): pass\n",
                       ".gitignore": "ignored/\n", "ignored/big.bin": "junk", "notes.md": "untracked\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "seam", "tests", ".gitignore"], check=True)
    return root


def test_materialize_writes_the_mutation_into_the_copy_and_never_into_the_tree(project: Path, tmp_path: Path) -> None:
    before = tree_hash(project)
    dest = materialize(project, tmp_path / "copy", no_join())
    assert tree_hash(project) == before
    assert JOIN not in (dest / "seam/scope.py").read_text()
    assert (project / "seam/scope.py").read_text() == SCOPE


def test_the_copy_holds_tracked_and_untracked_files_but_not_ignored_ones(project: Path, tmp_path: Path) -> None:
    dest = materialize(project, tmp_path / "copy", None)
    assert (dest / "tests/test_scope.py").exists() and (dest / "notes.md").exists()
    assert not (dest / "ignored").exists() and not (dest / ".git").exists()
    assert (dest / "seam/scope.py").read_text() == SCOPE


def test_outside_git_the_walk_skips_git_venv_and_caches(tmp_path: Path) -> None:
    for name in ("a.py", ".venv/lib.py", "pkg/__pycache__/a.pyc", "pkg/b.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert project_files(tmp_path) == ["a.py", "pkg/b.py"]


def test_a_target_symlink_in_the_tree_is_replaced_in_the_copy_not_written_through(project: Path, tmp_path: Path) -> None:
    (project / "seam/real.py").write_text(SCOPE)
    (project / "seam/link.py").symlink_to("real.py")
    before = tree_hash(project)
    dest = materialize(project, tmp_path / "copy", no_join("seam/link.py"))
    assert tree_hash(project) == before
    assert not (dest / "seam/link.py").is_symlink() and JOIN not in (dest / "seam/link.py").read_text()


@pytest.mark.parametrize("target", ["../outside.py", "/tmp/abs.py", "seam/scope.txt"])
def test_a_target_outside_the_project_or_not_python_is_refused_before_copying(
        project: Path, tmp_path: Path, target: str) -> None:
    with pytest.raises(MutationTargetError):
        materialize(project, tmp_path / "copy", no_join(target))
    assert not (tmp_path / "copy").exists()


def test_a_target_symlinked_out_of_the_project_is_refused(project: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.py").write_text(SCOPE)
    (project / "seam/escape.py").symlink_to(tmp_path / "elsewhere.py")
    with pytest.raises(MutationTargetError, match="outside the project"):
        materialize(project, tmp_path / "copy", no_join("seam/escape.py"))
    assert (tmp_path / "elsewhere.py").read_text() == SCOPE


def test_a_rotted_mutation_is_refused_before_anything_is_copied(project: Path, tmp_path: Path) -> None:
    (project / "seam/scope.py").write_text("class Scope:\n    pass\n")
    with pytest.raises(MutationRotError, match="anchor not found"):
        materialize(project, tmp_path / "copy", no_join())
    assert not (tmp_path / "copy").exists()


def test_a_destination_that_is_not_empty_or_holds_the_project_is_refused(project: Path, tmp_path: Path) -> None:
    (tmp_path / "used").mkdir()
    (tmp_path / "used/file").write_text("x")
    with pytest.raises(MutationTargetError, match="not an empty folder"):
        materialize(project, tmp_path / "used", None)
    with pytest.raises(MutationTargetError, match="contains the project"):
        materialize(project, tmp_path, None)
