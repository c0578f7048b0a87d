"""The errors of the mutation engine: a bad catalog entry, a refused target, a mutation that rotted.

``mutations`` may not import ``harness`` (dependencies point ``harness -> mutations``), so these
carry no exit code; ``harness.exit_mapping.code_for_error`` maps them (catalog and target errors are
usage errors, rot is an error of the gate that uses the mutation).
"""

from __future__ import annotations

from typing import Sequence


class MutationError(Exception):
    """Base of every error the mutation engine raises on purpose."""


class MutationCatalogError(MutationError):
    """A catalog file is wrong; every problem names file:line:column, the key, and the fix."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        super().__init__(_join(self.problems, "mutation catalog"))


class MutationTargetError(MutationError):
    """A mutation's target is not a ``.py`` file inside the project (``../x``, absolute, symlink out)."""


class MutationRotError(MutationError):
    """A mutation no longer applies to the code it targets (anchor gone, ambiguous, hunk mismatch)."""

    def __init__(self, mutation_id: str, message: str) -> None:
        self.mutation_id = mutation_id
        super().__init__(message)


def _join(problems: tuple[str, ...], what: str) -> str:
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} problems in the {what}:\n" + "\n".join(problems)
