"""A materialized tree: the folder a source state was written into, or the exception that kept it from being made.

A tree that cannot be made (a rotted mutation, a bad ref) is an ERROR of each gate that reads it, never of
the run; ``tree_error`` says why in a gate's words.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.gates.model import SourceState
from mutations.errors import MutationRotError


@dataclass(frozen=True)
class MaterializedTree:
    """Exactly one of ``path`` (the tree was made there) and ``error`` (why it could not be)."""

    path: Path | None = None
    error: Exception | None = None

    def __post_init__(self) -> None:
        if (self.path is None) == (self.error is None):
            raise ValueError("a materialized tree holds exactly one of a path and an error")

    @classmethod
    def made(cls, path: Path) -> MaterializedTree:
        """A tree made at ``path``."""
        return cls(path=path)

    @classmethod
    def failed(cls, error: Exception) -> MaterializedTree:
        """A tree that could not be made, and why."""
        return cls(error=error)

    @property
    def ok(self) -> bool:
        """Whether the tree was made (its ``path`` is set)."""
        return self.error is None

    def why(self, state: SourceState) -> str:
        """Why the tree of ``state`` could not be made (``tree_error``); only for a failed tree."""
        assert self.error is not None
        return tree_error(state, self.error)


def tree_error(state: SourceState, exc: Exception) -> str:
    """Why the tree of ``state`` could not be made, in the words a gate's ERROR gives."""
    if isinstance(exc, MutationRotError):
        return f"mutation {state.mutation} no longer applies: {exc}; update its anchor in the catalog"
    return f"cannot materialize {state.label()}: {exc}"
