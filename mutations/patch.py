"""A unified diff of one file, parsed strictly and applied exactly: no fuzz, no offset.

A ``patch:`` mutation rots as soon as the code it was written against changes, so applying is
deliberately unforgiving: every hunk's context and removed lines must equal the file's lines at
exactly the line the hunk header names (shifted only by the earlier hunks of the same diff). When
the hunk's text is found elsewhere the error says where, so the diff can be regenerated.
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


def apply_patch(text: str, patch: Patch) -> str:
    """The text with every hunk applied; ``PatchMismatch`` naming the first hunk that does not fit."""
    lines = text.splitlines()
    ends_with_newline = text.endswith("\n") or not text
    shift = 0
    for number, hunk in enumerate(patch.hunks, start=1):
        old = hunk.old_lines()
        start = max(hunk.old_start - 1, 0) + shift if old else hunk.old_start + shift
        if lines[start:start + len(old)] != old:
            raise PatchMismatch(_mismatch(number, hunk, lines, old))
        lines[start:start + len(old)] = hunk.new_lines()
        shift += len(hunk.new_lines()) - len(old)
        if start + len(hunk.new_lines()) == len(lines) and hunk.lines and hunk.lines[-1][0] != "-":
            ends_with_newline = not hunk.new_no_eol
    return "\n".join(lines) + ("\n" if ends_with_newline and lines else "")


def _mismatch(number: int, hunk: Hunk, lines: list[str], old: list[str]) -> str:
    found = [i + 1 for i in range(len(lines) - len(old) + 1) if lines[i:i + len(old)] == old]
    where = f"its lines are at line {found[0]} instead" if found else "its context and removed lines are not in the file"
    return f"hunk {number} (@@ -{hunk.old_start}) does not apply exactly: {where}"
