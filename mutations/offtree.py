"""Off-tree mutation: a named mutation's text, made from the project's file and written into a COPY only.

``harness/project_copy.py`` makes the copy (``materialize``) and calls these two: the mutated text is made
before anything is copied (a target outside the project, or a mutation that rotted, is refused first),
then written under the copy's folder, where a target that is a symlink is replaced by a regular file
first, so writing it can never reach through the link into the user's files.
"""

from __future__ import annotations

from pathlib import Path

from mutations.apply import apply_to_text
from mutations.check import read_target
from mutations.errors import MutationTargetError
from mutations.model import Mutation
from mutations.target import resolve_target


def mutated_target(project_root: Path, mutation: Mutation) -> str:
    """The text of ``mutation``'s target with the mutation applied; ``MutationTargetError`` for a target outside
    the project, ``MutationRotError`` for a mutation that no longer applies."""
    resolve_target(project_root, mutation.target)  # refuse an escaping target before reading anything
    return apply_to_text(read_target(project_root, mutation), mutation)


def write_mutated(dest: Path, target: str, text: str) -> None:
    """Write ``text`` as ``target`` under the copy ``dest``, never outside it nor through a link."""
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
