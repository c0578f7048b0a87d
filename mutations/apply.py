"""Applying a named mutation to source text: pure, strict, and loud when the mutation rotted.

An anchored operation (``delete``, ``replace``, ``insert-before``, ``insert-after``) must find its
anchor exactly once, or at the explicit ``occurrence``. A ``patch`` must find every hunk's lines
exactly, at an offset if the file moved (see ``mutations.patch``; the offset is reported in the
``Applied`` record). Anything else is mutation rot: the code the mutation targets changed, and a
mutation that silently stops applying would turn its gate into decoration.
"""

from __future__ import annotations

from dataclasses import dataclass

from mutations.errors import MutationRotError
from mutations.model import NAMED_OPS, Mutation
from mutations.named import apply_named
from mutations.patch import PatchFormatError, PatchMismatch, parse_patch, place_patch


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
    if mutation.op == "patch":
        return _apply_patch(text, mutation)
    return Applied(_apply_one(text, mutation))


def _apply_one(text: str, mutation: Mutation) -> str:
    if mutation.op in NAMED_OPS:
        return apply_named(text, mutation)
    start = _anchor_start(text, mutation)
    end = start + len(mutation.anchor)
    if mutation.op == "delete":
        return text[:start] + text[end:]
    if mutation.op == "replace":
        return text[:start] + mutation.text + text[end:]
    if mutation.op == "insert-before":
        return text[:start] + mutation.text + text[start:]
    if mutation.op == "insert-after":
        return text[:end] + mutation.text + text[end:]
    raise ValueError(f"mutation {mutation.id!r}: unknown operation {mutation.op!r}")


def anchor_starts(text: str, anchor: str) -> list[int]:
    """Every index where ``anchor`` starts in ``text``, overlapping matches included."""
    starts: list[int] = []
    index = text.find(anchor)
    while index != -1:
        starts.append(index)
        index = text.find(anchor, index + 1)
    return starts


def _anchor_start(text: str, mutation: Mutation) -> int:
    starts = anchor_starts(text, mutation.anchor)
    where = f"mutation {mutation.id!r} no longer applies"
    if not starts:
        if "\r\n" in text and "\r\n" not in mutation.anchor and anchor_starts(text.replace("\r\n", "\n"), mutation.anchor):
            raise MutationRotError(mutation.id, (
                f"{where}: {mutation.target} has CRLF line endings and the anchor has LF ones (the code did not "
                f"change; its line endings differ): convert the file to LF, or write the anchor with \\r\\n, "
                f"in the catalog entry at {mutation.location}"
            ))
        raise MutationRotError(mutation.id, (
            f"{where}: anchor not found in {mutation.target} (the code it targets changed; update the "
            f"catalog entry at {mutation.location})"
        ))
    if mutation.occurrence is None:
        if len(starts) > 1:
            raise MutationRotError(mutation.id, (
                f"{where}: anchor matches {len(starts)} times in {mutation.target} (lines "
                f"{', '.join(str(text.count(chr(10), 0, s) + 1) for s in starts)}); add `occurrence:` "
                f"(1..{len(starts)}) to the catalog entry at {mutation.location}"
            ))
        return starts[0]
    if mutation.occurrence > len(starts):
        raise MutationRotError(mutation.id, (
            f"{where}: `occurrence: {mutation.occurrence}` asked for, but the anchor matches "
            f"{len(starts)} time(s) in {mutation.target}; update the catalog entry at {mutation.location}"
        ))
    return starts[mutation.occurrence - 1]


def _apply_patch(text: str, mutation: Mutation) -> Applied:
    try:
        result = place_patch(text, parse_patch(mutation.patch or ""))
        return Applied(result.text, tuple(p.describe() for p in result.offsets))
    except (PatchMismatch, PatchFormatError) as exc:
        raise MutationRotError(mutation.id, (
            f"mutation {mutation.id!r} no longer applies: patch {mutation.patch_file or '(inline)'} on "
            f"{mutation.target}: {exc}"
        )) from None
