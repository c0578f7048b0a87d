"""A copy of the project: what it holds, and ``materialize``, which makes one and lays a mutation over it.

Every source state a row or a sweep runs is such a copy in a temp folder (``harness/run/trees.py``,
``harness/sweep/sweep.py``), and the tree guard watches the same list of files
(``harness/rows/tree_guard.py``). The user's tree is never written: the mutation is applied to the COPY
only, by ``mutations/offtree.py`` (which refuses to write through a link into the user's files).
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harness.config import load_config
from harness.errors import ConfigError
from mutations.errors import MutationTargetError
from mutations.model import Mutation
from mutations.offtree import mutated_target, write_mutated

#: Folders the fallback walk (project not in git) never copies.
_SKIPPED_DIRS = frozenset({".git", ".venv", "venv", "__pycache__", ".seamgate", ".pytest_cache", ".mypy_cache"})
#: Untracked folder names that are virtual environments whatever they hold.
_VENV_NAMES = frozenset({".venv", "venv"})


@dataclass(frozen=True)
class CopyRules:
    """What a copy holds besides git's tracked + untracked-not-ignored files (``[tool.seamgate]``).

    ``include``: glob patterns (relative to the project) of files copied even when git ignores them,
    e.g. a generated ``src/pkg/_version.py``; a pattern that names a folder copies every file under it. ``exclude``: glob patterns never copied. The keys are
    read and validated by ``harness/config.py`` (``copy_include``, ``copy_exclude``).
    """

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def load(cls, project_root: Path) -> CopyRules:
        """The rules of ``project_root``'s ``[tool.seamgate]``, read by ``harness/config.py`` (the one reader of
        our settings); a table it refuses gives no rules here (a command reads the settings first and says why)."""
        try:
            config = load_config(project_root)
        except ConfigError:
            return cls()
        return cls(include=config.copy_include, exclude=config.copy_exclude)


def project_files(project_root: Path, rules: CopyRules | None = None) -> list[str]:
    """What a copy of the project holds, relative to ``project_root``:

    - git's tracked files, and its untracked files that are not ignored, EXCEPT an untracked virtual
      environment (a folder named ``.venv``/``venv``, one holding ``pyvenv.cfg``, or any
      ``site-packages`` folder) and anything under ``.seamgate/`` (seamgate's own lock and results);
    - plus the files ``rules.include`` matches, ignored or not (a generated ``_version.py``);
    - minus the files ``rules.exclude`` matches.

    Outside a git work tree (or without git), a walk that skips ``.git``, virtual environments
    and caches.
    """
    rules = rules if rules is not None else CopyRules.load(project_root)
    try:
        tracked = _git(project_root, "--cached")
        others = _git(project_root, "--others", "--exclude-standard", "--directory")
    except (OSError, subprocess.CalledProcessError):
        names = set(_walk(project_root))
    else:
        names = set(tracked)
        for entry in others:
            if not entry.endswith("/"):
                names.add(entry)
            elif not _is_environment(project_root, entry.rstrip("/")):
                names.update(n for n in _git(project_root, "--others", "--exclude-standard", "--", entry)
                             if not _under_environment(project_root, n))
    names = {n for n in names if n != ".seamgate" and not n.startswith(".seamgate/")}
    for pattern in rules.include:
        # A folder named (`toolz.egg-info`) is copied whole, as `toolz.egg-info/**` would be.
        found = [p for match in project_root.glob(pattern)
                 for p in ([match] if not match.is_dir() else sorted(match.rglob("*")))]
        names.update(p.relative_to(project_root).as_posix() for p in found
                     if p.is_file() and ".seamgate" not in p.relative_to(project_root).parts)
    return sorted(n for n in names if not any(_matches(n, pattern) for pattern in rules.exclude))


def _git(project_root: Path, *args: str) -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z", *args], cwd=project_root, capture_output=True,
                            check=True).stdout
    return [name for name in os.fsdecode(listed).split("\0") if name]


def _is_environment(project_root: Path, rel: str) -> bool:
    folder = project_root / rel
    return (folder.name in _VENV_NAMES or folder.name == "site-packages"
            or (folder / "pyvenv.cfg").is_file() or folder.name == ".seamgate")


def _under_environment(project_root: Path, rel: str) -> bool:
    parts = PurePosixPath(rel).parts
    return any(_is_environment(project_root, "/".join(parts[:i])) for i in range(1, len(parts)))


def _matches(name: str, pattern: str) -> bool:
    """``pattern`` (fnmatch; ``*`` crosses ``/``) matches the file or a folder above it (``data`` excludes ``data/x``)."""
    pattern = pattern.rstrip("/")
    parts = PurePosixPath(name).parts
    return any(fnmatch.fnmatchcase("/".join(parts[:i]), pattern) for i in range(1, len(parts) + 1))


def _walk(project_root: Path) -> list[str]:
    files: list[str] = []
    for folder, dirs, names in os.walk(project_root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.endswith(".egg-info")
                         and not (Path(folder) / d / "pyvenv.cfg").is_file())
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
    # an escaping target, or a mutation that rotted, is refused before anything is copied
    mutated = None if mutation is None else mutated_target(root, mutation)
    dest.mkdir(parents=True, exist_ok=True)
    for name in project_files(root):
        _copy_one(root / name, dest / name, dest)
    if mutation is not None and mutated is not None:
        write_mutated(dest, mutation.target, mutated)
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
    if not target.parent.resolve().is_relative_to(dest):
        return  # under a linked folder the copy already holds (the link): copying would write through it
    if source.is_symlink():
        os.symlink(os.readlink(source), target)
    elif source.is_dir():  # a submodule or nested repository: git lists its folder
        shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns(".git", "__pycache__"))
    else:
        shutil.copy2(source, target)
