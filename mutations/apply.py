"""Applying a named mutation to source text: pure, strict, and loud when the mutation rotted.

An anchored operation (``delete``, ``replace``, ``insert-before``, ``insert-after``) must find its
anchor exactly once, or at the explicit ``occurrence``. A ``patch`` must apply exactly (see
``mutations.patch``). Anything else is mutation rot: the code the mutation targets changed, and a
mutation that silently stops applying would turn its gate into decoration.
"""

from __future__ import annotations

from mutations.errors import MutationRotError
from mutations.model import NAMED_OPS, Mutation
from mutations.named import apply_named
from mutations.patch import PatchFormatError, PatchMismatch, apply_patch, parse_patch


def apply_to_text(text: str, mutation: Mutation) -> str:
    """``text`` (the target's source) with ``mutation`` applied; ``MutationRotError`` if it no longer applies."""
    if mutation.op == "patch":
        return _apply_patch(text, mutation)
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


def _apply_patch(text: str, mutation: Mutation) -> str:
    try:
        return apply_patch(text, parse_patch(mutation.patch or ""))
    except (PatchMismatch, PatchFormatError) as exc:
        raise MutationRotError(mutation.id, (
            f"mutation {mutation.id!r} no longer applies: patch {mutation.patch_file or '(inline)'} on "
            f"{mutation.target}: {exc} (the code it targets changed; regenerate the diff)"
        )) from None
