"""Applying a named mutation to source text: pure, strict, and loud when the mutation rotted.

Each operation is applied through its entry in ``mutations.operators``: the entry's edit resolves it on the
text to one span and its replacement. An anchored operation (``delete``, ``replace``, ``insert-before``,
``insert-after``) must find its anchor exactly once, or at the explicit ``occurrence`` (``mutations.anchors``).
A ``patch`` must find every hunk's lines exactly, at an offset if the file moved (see ``mutations.patch``; the
offset is reported in the ``Applied`` record). Anything else is mutation rot: the code the mutation targets
changed, and a mutation that silently stops applying would turn its gate into decoration.
"""

from __future__ import annotations

from dataclasses import dataclass

from mutations import operators
from mutations.model import Mutation


@dataclass(frozen=True)
class Applied:
    """A mutation applied to a text: the result, and what the user should know about how it applied."""

    #: The mutated source.
    text: str
    #: One line per patch hunk that applied at an offset (``hunk 2 (@@ -40) applied at offset +1 line``).
    notes: tuple[str, ...] = ()


def apply_to_text(text: str, mutation: Mutation) -> str:
    """``text`` (the target's source) with ``mutation`` applied; ``MutationRotError`` if it no longer applies."""
    return apply_mutation(text, mutation).text


def apply_mutation(text: str, mutation: Mutation) -> Applied:
    """``apply_to_text`` with its record: the notes of every step, in order."""
    if mutation.steps:
        notes: list[str] = []
        for number, step in enumerate(mutation.steps, start=1):
            applied = apply_mutation(text, step)
            text = applied.text
            notes.extend(f"step {number}: {note}" for note in applied.notes)
        return Applied(text, tuple(notes))
    try:
        spec = operators.operator(mutation.op)
    except KeyError:
        raise ValueError(f"mutation {mutation.id!r}: unknown operation {mutation.op!r}") from None
    edit = spec.edit(text, mutation)
    return Applied(edit.apply(text), edit.notes)
