"""Exact source text as an anchor: where it starts, exactly once or at an explicit occurrence, else mutation rot.

The operators anchored on text (``delete``, ``replace``, ``insert-before``, ``insert-after``; see
``mutations.operators``) find their place here. A missing anchor, an anchor that matches several times with
no ``occurrence``, or an ``occurrence`` past the last match is rot, said so with the catalog entry's place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mutations.errors import MutationRotError

if TYPE_CHECKING:
    from mutations.model import Mutation


def anchor_starts(text: str, anchor: str) -> list[int]:
    """Every index where ``anchor`` starts in ``text``, overlapping matches included."""
    starts: list[int] = []
    index = text.find(anchor)
    while index != -1:
        starts.append(index)
        index = text.find(anchor, index + 1)
    return starts


def anchor_start(text: str, mutation: Mutation) -> int:
    """Where ``mutation.anchor`` starts in ``text``: its one match, or its ``occurrence``; ``MutationRotError`` else."""
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
