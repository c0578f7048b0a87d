"""Off-tree materialisation: a copy of the project, with a mutation applied to the COPY only.

The user's tree is never written: the mutated target is written under ``dest`` after the copy,
and a target that is a symlink in the copy is replaced by a regular file first, so writing it can
never reach through the link into the user's files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from mutations.apply import apply_to_text
from mutations.check import read_target
from mutations.errors import MutationTargetError
from mutations.model import Mutation
from mutations.target import resolve_target

#: Folders the fallback walk (project not in git) never copies.
_SKIPPED_DIRS = frozenset({".git", ".venv", "venv", "__pycache__", ".seamgate", ".pytest_cache", ".mypy_cache"})


def project_files(project_root: Path) -> list[str]:
    """The project's files relative to ``project_root``: git's tracked + untracked-not-ignored.

    Outside a git work tree (or without git), a walk that skips ``.git``, virtual environments
    and caches.
    """
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=project_root, capture_output=True, check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return _walk(project_root)
    return sorted({name for name in os.fsdecode(listed).split("\0") if name})


def _walk(project_root: Path) -> list[str]:
    files: list[str] = []
    for folder, dirs, names in os.walk(project_root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.endswith(".egg-info"))
        base = Path(folder).relative_to(project_root)
        files.extend((base / name).as_posix() for name in sorted(names) if not name.endswith(".pyc"))
    return files


def materialize(project_root: Path, dest: Path, mutation: Mutation | None) -> Path:
    """Copy the project into ``dest`` (new or empty) and apply ``mutation`` there; returns ``dest``.

    Raises ``MutationTargetError`` for a target outside the project or a ``dest`` that would overlap
    the project in a harmful way, and ``MutationRotError`` when the mutation no longer applies (the
    copy is then left incomplete; the caller owns ``dest`` and removes it).
    """
    root = project_root.resolve()
    dest = dest.resolve()
    _check_dest(root, dest)
    mutated = None
    if mutation is not None:
        resolve_target(root, mutation.target)  # refuse an escaping target before copying anything
        mutated = apply_to_text(read_target(root, mutation), mutation)
    dest.mkdir(parents=True, exist_ok=True)
    for name in project_files(root):
        _copy_one(root / name, dest / name, dest)
    if mutation is not None and mutated is not None:
        _write_mutated(dest, mutation.target, mutated)
    return dest


def _check_dest(root: Path, dest: Path) -> None:
    if dest == root or root.is_relative_to(dest):
        raise MutationTargetError(f"materialize destination {dest} contains the project {root}; use a fresh folder")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise MutationTargetError(f"materialize destination {dest} is not an empty folder; use a fresh one")


def _copy_one(source: Path, target: Path, dest: Path) -> None:
    if source.resolve().is_relative_to(dest) or not os.path.lexists(source):
        return  # dest inside the project (and not ignored), or a tracked file deleted from the tree
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_symlink():
        os.symlink(os.readlink(source), target)
    elif source.is_dir():  # a submodule or nested repository: git lists its folder
        shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns(".git", "__pycache__"))
    else:
        shutil.copy2(source, target)


def _write_mutated(dest: Path, target: str, text: str) -> None:
    path = dest / target
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.parent.resolve().is_relative_to(dest):
        raise MutationTargetError(
            f"the copy's folder for {target} resolves to {path.parent.resolve()}, outside {dest} (a linked "
            "folder); refusing to write the mutated file there"
        )
    if path.is_symlink():
        path.unlink()  # never write through a link: it may point into the user's tree
    path.write_text(text, encoding="utf-8", newline="")
