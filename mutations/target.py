"""A mutation's target: a ``.py`` file inside the project, never a path that leaves it.

The check is made twice on purpose: on the written path when the catalog is loaded (``../x``,
``/abs``, ``x.txt``), and on the resolved path whenever the file is read or written, because a
symlink inside the project may point anywhere.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from mutations.errors import MutationTargetError


def target_problem(target: str) -> str | None:
    """Why ``target`` (as written in the catalog) is not an acceptable target, or ``None``."""
    if "\\" in target:
        return f"target {target!r} uses '\\'; write the path with '/' relative to the project root"
    path = PurePosixPath(target)
    if path.is_absolute():
        return f"target {target!r} is absolute; write it relative to the project root (e.g. seam/scope.py)"
    if ".." in path.parts:
        return f"target {target!r} leaves the project ('..'); a mutation may only change files inside it"
    if path.suffix != ".py":
        return f"target {target!r} is not a .py file; mutations change Python source only"
    return None


def resolve_target(project_root: Path, target: str) -> Path:
    """The absolute path of ``target`` under ``project_root``, after following symlinks.

    Raises ``MutationTargetError`` when the written path is refused or a symlink resolves outside
    the project. The file need not exist (a vanished target is rot, reported by the caller).
    """
    problem = target_problem(target)
    if problem is not None:
        raise MutationTargetError(problem)
    root = project_root.resolve()
    resolved = (root / target).resolve()
    if not resolved.is_relative_to(root):
        raise MutationTargetError(
            f"target {target!r} resolves to {resolved}, outside the project {root} (a symlink "
            "points out of the project); target the real file inside the project"
        )
    return resolved
