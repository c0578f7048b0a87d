"""A unified diff of one file, parsed strictly and applied at an offset, with GNU patch's fuzz (at most 2).

A hunk's context and removed lines are first looked for EXACTLY: at the line the hunk header names
(shifted by the earlier hunks of the same diff) and, when the file moved under the diff (a docstring
line added above, a helper inserted), at the nearest line where they do appear, after the previous
hunk. That shift is the hunk's OFFSET. Only when the exact lines are nowhere does FUZZ apply, as in
GNU patch: fuzz 1, then 2, ignores that many context lines at the hunk's outer edges (a hunk with
less leading than trailing context, as at the top of a file, loses its trailing lines first); removed
lines are never ignored. A hunk with less context proves less, so a fuzzed hunk must match in exactly
ONE place after the previous hunk: two places are refused, naming the hunk and both lines. Offset and
fuzz are reported (``HunkPlacement``; ``seamgate mutations check`` prints them) so a drifting diff is
seen before it rots. A hunk whose lines are nowhere, even at fuzz 2, is rot, named with the fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_EOL = "\\ No newline at end of file"
#: GNU patch's default ``--fuzz``: at most this many context lines are ignored at each edge of a hunk.
MAX_FUZZ = 2


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
    #: Context lines ignored at each outer edge to place it (0: its exact lines; at most ``MAX_FUZZ``).
    fuzz: int = 0

    def describe(self) -> str:
        """``hunk 2 (@@ -40) applied at offset +1 line with fuzz 1`` (``patch``: "succeeded at 41 with fuzz 1
        (offset 1 line)"); the offset part only when there is one, the fuzz part likewise."""
        lines = "line" if abs(self.offset) == 1 else "lines"
        where = f" at offset {self.offset:+d} {lines}" if self.offset or not self.fuzz else ""
        fuzz = f" with fuzz {self.fuzz}" if self.fuzz else ""
        return f"hunk {self.number} (@@ -{self.stated}) applied{where}{fuzz}"


@dataclass(frozen=True)
class PatchResult:
    """The patched text and where each hunk applied."""

    text: str
    placements: tuple[HunkPlacement, ...]

    @property
    def offsets(self) -> tuple[HunkPlacement, ...]:
        """The hunks that did NOT apply exactly as their header says: at an offset, or with fuzz (what
        ``mutations check`` reports)."""
        return tuple(p for p in self.placements if p.offset or p.fuzz)


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
        start, fuzz, ignored, body = _nearest(lines, old, expected, floor), 0, 0, hunk.lines
        if start is None:
            start, fuzz, ignored, body = _fuzzed(number, hunk, lines, floor)
        old, new = [t for tag, t in body if tag != "+"], [t for tag, t in body if tag != "-"]
        offset = start - ignored - expected  # where the whole hunk (its ignored leading lines too) starts
        placements.append(HunkPlacement(number, hunk.old_start, offset, fuzz))
        lines[start:start + len(old)] = new
        shift += offset + len(new) - len(old)
        floor = start + len(new)
        if body is hunk.lines and start + len(new) == len(lines) and hunk.lines and hunk.lines[-1][0] != "-":
            ends_with_newline = not hunk.new_no_eol  # (a hunk whose last lines were ignored says nothing of the end)
    return PatchResult(newline.join(lines) + (newline if ends_with_newline and lines else ""), tuple(placements))


def _fuzzed(number: int, hunk: Hunk, lines: list[str],
            floor: int) -> tuple[int, int, int, tuple[tuple[str, str], ...]]:
    """(start, fuzz, leading lines ignored, the hunk's lines left) for a hunk whose exact lines are nowhere:
    fuzz 1, then 2, as GNU patch's ``locate_hunk``; ``PatchMismatch`` when no level places it in exactly
    one place after ``floor``."""
    old, tried = hunk.old_lines(), 0
    for fuzz in range(1, MAX_FUZZ + 1):
        front, body = _without_context(hunk, fuzz)
        if body is None:
            break
        tried = fuzz
        short = [text for tag, text in body if tag != "+"]
        starts = [i for i in range(floor, len(lines) - len(short) + 1) if lines[i:i + len(short)] == short]
        if len(starts) > 1:
            raise PatchMismatch(
                f"hunk {number} (@@ -{hunk.old_start}) does not apply: with fuzz {fuzz} its lines match in "
                f"{len(starts)} places (lines {', '.join(str(i + 1) for i in starts)}), so where it belongs is "
                "ambiguous and it is not applied; regenerate the diff against today's file (`git diff` / "
                "`diff -u`), or anchor the change on a name (replace-def, replace-in-def)")
        if starts:
            return starts[0], fuzz, front, body
    tail = f" (tried with up to {tried} context line{'s' if tried > 1 else ''} dropped at each edge: fuzz)" if tried else ""
    raise PatchMismatch(_mismatch(number, hunk, lines, old, floor) + tail)


def _without_context(hunk: Hunk, fuzz: int) -> tuple[int, tuple[tuple[str, str], ...] | None]:
    """(lines dropped in front, the hunk's lines less ``fuzz`` context lines at each outer edge) as GNU
    patch drops them (a side with less context than the other loses fewer); ``None``: nothing dropped,
    or nothing left to match by."""
    body = hunk.lines
    prefix = next((i for i, (tag, _) in enumerate(body) if tag != " "), len(body))
    suffix = next((i for i, (tag, _) in enumerate(reversed(body)) if tag != " "), len(body))
    context = max(prefix, suffix)
    drop_front = min(prefix, max(0, fuzz + prefix - context))
    drop_back = min(suffix, max(0, fuzz + suffix - context))
    kept = body[drop_front:len(body) - drop_back]
    if (not drop_front and not drop_back) or not any(tag != "+" for tag, _ in kept):
        return drop_front, None
    return drop_front, kept


def _nearest(lines: list[str], old: list[str], expected: int, floor: int) -> int | None:
    """The start at or after ``floor`` where ``old`` matches, nearest to ``expected`` (on a tie, the
    earlier one, as ``patch`` tries); ``None`` when it matches nowhere there."""
    if not old:  # a pure insertion (into an empty file, or after line N): it has nothing to search by
        return expected if floor <= expected <= len(lines) else None
    starts = [i for i in range(floor, len(lines) - len(old) + 1) if lines[i:i + len(old)] == old]
    return min(starts, key=lambda i: (abs(i - expected), i)) if starts else None


def _mismatch(number: int, hunk: Hunk, lines: list[str], old: list[str], floor: int) -> str:
    """Why a hunk's exact lines do not apply (gone, or only above the previous hunk), and the fix."""
    found = [i + 1 for i in range(len(lines) - len(old) + 1) if old and lines[i:i + len(old)] == old]
    where = (f"its lines are only above the previous hunk (line {found[0]})" if found
             else "its context and removed lines are no longer in the file")
    return (f"hunk {number} (@@ -{hunk.old_start}) does not apply: {where}; regenerate the diff against "
            "today's file (`git diff` / `diff -u`), or anchor the change on a name (replace-def, replace-in-def)")
