"""A unified diff of one file, parsed strictly and applied at an offset, as ``git apply`` does: no fuzz.

Every hunk's context and removed lines must appear in the file EXACTLY (no line of context is
dropped: a hunk that applies with less context than it was written with proves less). They are
looked for at the line the hunk header names (shifted by the earlier hunks of the same diff) and,
when the file moved under the diff (a docstring line added above, a helper inserted), at the
nearest line where they do appear, after the previous hunk. That shift is the hunk's OFFSET, and it
is reported (``HunkPlacement``; ``seamgate mutations check`` prints it) so a drifting diff is seen
before it rots. A hunk whose lines are nowhere after the previous one is rot, named with the fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_EOL = "\\ No newline at end of file"


class PatchFormatError(ValueError):
    """The diff text is not a well-formed single-file unified diff."""


class PatchMismatch(ValueError):
    """A hunk does not match the file it is applied to."""


@dataclass(frozen=True)
class Hunk:
    """One ``@@`` block: where it starts and its lines, each tagged ``' '``, ``'-'`` or ``'+'``."""

    #: 1-based first line in the old file (0 for a hunk that inserts into an empty file).
    old_start: int
    #: ``(tag, text)`` pairs; ``text`` has no line terminator.
    lines: tuple[tuple[str, str], ...]
    #: The new side's last line has no newline ("\\ No newline at end of file" after a + or ' ').
    new_no_eol: bool = False

    def old_lines(self) -> list[str]:
        return [text for tag, text in self.lines if tag != "+"]

    def new_lines(self) -> list[str]:
        return [text for tag, text in self.lines if tag != "-"]


@dataclass(frozen=True)
class Patch:
    """A parsed single-file unified diff."""

    #: The path of the ``+++`` header with its ``b/`` prefix removed (``None`` if headerless).
    path: str | None
    hunks: tuple[Hunk, ...]


def parse_patch(text: str) -> Patch:
    """Parse ``text``; ``PatchFormatError`` for anything but one file's well-formed hunks."""
    lines = text.splitlines()
    path, index = _parse_headers(lines)
    hunks: list[Hunk] = []
    while index < len(lines):
        if not _HUNK.match(lines[index]):
            raise PatchFormatError(f"diff line {index + 1}: expected a hunk header '@@ -a,b +c,d @@', "
                                   f"got {lines[index]!r} (one file per patch)")
        hunk, index = _parse_hunk(lines, index)
        hunks.append(hunk)
    if not hunks:
        raise PatchFormatError("the diff has no hunks ('@@ ... @@'); write it with `git diff` or `diff -u`")
    return Patch(path, tuple(hunks))


def _parse_headers(lines: list[str]) -> tuple[str | None, int]:
    path: str | None = None
    index = 0
    while index < len(lines) and not _HUNK.match(lines[index]):
        line = lines[index]
        if line.startswith("+++ "):
            if path is not None:
                raise PatchFormatError(f"diff line {index + 1}: a second '+++' header; a patch changes one file")
            name = line[4:].split("\t")[0].strip()
            path = name[2:] if name.startswith("b/") else name
        index += 1
    return path, index


def _parse_hunk(lines: list[str], index: int) -> tuple[Hunk, int]:
    header_text = lines[index]
    header = _HUNK.match(header_text)
    if header is None:  # the caller matched it; kept for the type checker
        raise PatchFormatError(f"diff line {index + 1}: not a hunk header")
    old_count = int(header.group(2) if header.group(2) is not None else 1)
    new_count = int(header.group(4) if header.group(4) is not None else 1)
    body: list[tuple[str, str]] = []
    no_eol = False
    index += 1
    while index < len(lines):
        line = lines[index]
        if line == _NO_EOL:
            no_eol = bool(body) and body[-1][0] != "-"
        elif _count(body, "-") >= old_count and _count(body, "+") >= new_count:
            break
        elif line == "":
            body.append((" ", ""))  # a blank context line whose trailing space an editor removed
        elif line[0] in " -+":
            body.append((line[0], line[1:]))
        else:
            break
        index += 1
    if _count(body, "-") != old_count or _count(body, "+") != new_count:
        raise PatchFormatError(
            f"hunk {header_text!r}: the header says {old_count} old and {new_count} new lines, the body "
            f"has {_count(body, '-')} and {_count(body, '+')}; regenerate the diff"
        )
    return Hunk(int(header.group(1)), tuple(body), no_eol), index


def _count(body: list[tuple[str, str]], side: str) -> int:
    return sum(1 for tag, _ in body if tag in (side, " "))


@dataclass(frozen=True)
class HunkPlacement:
    """Where one hunk applied: the line its header names and the shift from there."""

    #: 1-based hunk number in the diff.
    number: int
    #: The old-file line the header names (``@@ -N``).
    stated: int
    #: Lines between where the hunk was expected (after earlier hunks' shifts) and where it applied;
    #: ``0`` when it applied where stated, positive when the file grew above it.
    offset: int

    def describe(self) -> str:
        """``hunk 2 (@@ -40) applied at offset +1 line`` (what ``patch`` prints as "succeeded at 41 (offset 1 line)")."""
        lines = "line" if abs(self.offset) == 1 else "lines"
        return f"hunk {self.number} (@@ -{self.stated}) applied at offset {self.offset:+d} {lines}"


@dataclass(frozen=True)
class PatchResult:
    """The patched text and where each hunk applied."""

    text: str
    placements: tuple[HunkPlacement, ...]

    @property
    def offsets(self) -> tuple[HunkPlacement, ...]:
        """The hunks that did NOT apply where their header says (what ``mutations check`` reports)."""
        return tuple(p for p in self.placements if p.offset)


def apply_patch(text: str, patch: Patch) -> str:
    """The text with every hunk applied (at an offset where needed); ``PatchMismatch`` naming the first
    hunk that does not fit."""
    return place_patch(text, patch).text


def place_patch(text: str, patch: Patch) -> PatchResult:
    """``apply_patch``, also saying where each hunk applied."""
    lines = text.splitlines()
    newline = "\r\n" if "\r\n" in text else "\n"  # a CRLF file stays CRLF (its lines compare without the \r)
    ends_with_newline = text.endswith("\n") or not text
    shift, floor = 0, 0  # floor: a hunk may not apply above the end of the previous one
    placements: list[HunkPlacement] = []
    for number, hunk in enumerate(patch.hunks, start=1):
        old = hunk.old_lines()
        expected = max(hunk.old_start - 1, 0) + shift if old else hunk.old_start + shift
        start = _nearest(lines, old, expected, floor)
        if start is None:
            raise PatchMismatch(_mismatch(number, hunk, lines, old, floor))
        placements.append(HunkPlacement(number, hunk.old_start, start - expected))
        lines[start:start + len(old)] = hunk.new_lines()
        shift += (start - expected) + len(hunk.new_lines()) - len(old)
        floor = start + len(hunk.new_lines())
        if start + len(hunk.new_lines()) == len(lines) and hunk.lines and hunk.lines[-1][0] != "-":
            ends_with_newline = not hunk.new_no_eol
    return PatchResult(newline.join(lines) + (newline if ends_with_newline and lines else ""), tuple(placements))


def _nearest(lines: list[str], old: list[str], expected: int, floor: int) -> int | None:
    """The start at or after ``floor`` where ``old`` matches, nearest to ``expected`` (on a tie, the
    earlier one, as ``patch`` tries); ``None`` when it matches nowhere there."""
    if not old:  # a pure insertion (into an empty file, or after line N): it has nothing to search by
        return expected if floor <= expected <= len(lines) else None
    starts = [i for i in range(floor, len(lines) - len(old) + 1) if lines[i:i + len(old)] == old]
    return min(starts, key=lambda i: (abs(i - expected), i)) if starts else None


def _mismatch(number: int, hunk: Hunk, lines: list[str], old: list[str], floor: int) -> str:
    found = [i + 1 for i in range(len(lines) - len(old) + 1) if old and lines[i:i + len(old)] == old]
    where = (f"its lines are only above the previous hunk (line {found[0]})" if found
             else "its context and removed lines are no longer in the file")
    return (f"hunk {number} (@@ -{hunk.old_start}) does not apply: {where}; regenerate the diff against "
            "today's file (`git diff` / `diff -u`), or anchor the change on a name (replace-def, replace-in-def)")
