"""Checking a mutation against today's code: it applies exactly once, the result compiles, its diff stat.

``seamgate mutations check`` runs this over the catalog so rot shows up in CI before a gate that
uses the mutation silently stops meaning anything.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mutations.apply import apply_mutation, apply_to_text
from mutations.errors import MutationRotError
from mutations.model import Mutation
from mutations.target import resolve_target

CheckStatus = Literal["ok", "rot", "no-compile", "lint"]


@dataclass(frozen=True)
class CheckResult:
    """What checking one mutation found."""

    #: The mutation's id.
    mutation_id: str
    #: Its target, relative to the project root.
    target: str
    #: ``ok``; ``rot`` (no longer applies, or the target vanished); ``no-compile`` (applies, but
    #: the mutated file is not valid Python, so every gate using it would be an ERROR, not a red);
    #: ``lint`` (compiles, but the mutation ADDS a redefinition or an undefined name: a mutant that
    #: shadows its own code proves nothing about the code it meant to change).
    status: CheckStatus
    #: Lines added by the mutation (0 when it did not apply).
    added: int = 0
    #: Lines removed by the mutation.
    removed: int = 0
    #: Why the status is not ``ok``; ``None`` when it is.
    problem: str | None = None
    #: How it applied, when the user should know: each patch hunk that applied at an offset.
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def diffstat(self) -> str:
        return f"+{self.added} -{self.removed}"


def read_target(project_root: Path, mutation: Mutation) -> str:
    """The current source of ``mutation``'s target; ``MutationRotError`` if the file vanished."""
    path = resolve_target(project_root, mutation.target)
    try:
        return path.read_bytes().decode("utf-8")  # bytes, so "\r\n" survives into the copy
    except UnicodeDecodeError as exc:
        raise MutationRotError(mutation.id, (
            f"mutation {mutation.id!r}: its target {mutation.target} is not UTF-8 text ({exc.reason})"
        )) from None
    except FileNotFoundError:
        raise MutationRotError(mutation.id, (
            f"mutation {mutation.id!r} no longer applies: its target {mutation.target} does not exist "
            f"(moved or deleted? update the catalog entry at {mutation.location})"
        )) from None


def mutated_diff(project_root: Path, mutation: Mutation) -> str:
    """The unified diff of the mutated target against the original (``a/`` and ``b/`` prefixed)."""
    original = read_target(project_root, mutation)
    mutated = apply_to_text(original, mutation)
    return "".join(difflib.unified_diff(
        original.splitlines(keepends=True), mutated.splitlines(keepends=True),
        f"a/{mutation.target}", f"b/{mutation.target}",
    ))


def check_mutation(project_root: Path, mutation: Mutation) -> CheckResult:
    """Apply ``mutation`` in memory to its target, compile the result, and count changed lines."""
    try:
        original = read_target(project_root, mutation)
        applied = apply_mutation(original, mutation)
    except MutationRotError as exc:
        return CheckResult(mutation.id, mutation.target, "rot", problem=str(exc))
    mutated = applied.text
    added, removed = diff_stat(original, mutated)
    try:
        compile(mutated, mutation.target, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        where = f"{mutation.target}:{line}" if line else mutation.target
        return CheckResult(mutation.id, mutation.target, "no-compile", added, removed, (
            f"mutation {mutation.id!r}: the mutated {where} does not compile: "
            f"{getattr(exc, 'msg', exc)}; fix the entry at {mutation.location}"
        ))
    added_problems = lint_problems(mutated, mutation.target) - lint_problems(original, mutation.target)
    if added_problems:
        return CheckResult(mutation.id, mutation.target, "lint", added, removed, (
            f"mutation {mutation.id!r}: the mutated {mutation.target} " + "; ".join(sorted(added_problems))
            + f"; a mutation must not redefine a name or leave one undefined: fix the entry at {mutation.location}"
        ))
    return CheckResult(mutation.id, mutation.target, "ok", added, removed, notes=applied.notes)


#: pyflakes messages that make a mutant meaningless (the rest, e.g. an unused import, are harmless).
_LINT_KINDS = ("RedefinedWhileUnused", "UndefinedName", "UndefinedLocal", "DuplicateArgument")


def lint_problems(source: str, filename: str) -> set[str]:
    """The redefinitions and undefined names pyflakes finds in ``source``, without line numbers (so
    the same problem before and after a mutation compares equal)."""
    from pyflakes import checker

    tree = ast.parse(source, filename=filename)
    found = checker.Checker(tree, filename=filename)
    return {str(m.message % m.message_args) for m in found.messages if type(m).__name__ in _LINT_KINDS}


def diff_stat(original: str, mutated: str) -> tuple[int, int]:
    """``(added, removed)`` lines between the two texts, as ``git diff --stat`` counts them."""
    added = removed = 0
    for line in difflib.unified_diff(original.splitlines(), mutated.splitlines(), lineterm="", n=0):
        if line.startswith(("+++", "---")):
            continue
        added += line.startswith("+")
        removed += line.startswith("-")
    return added, removed
