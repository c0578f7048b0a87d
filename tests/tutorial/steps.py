"""The tutorial as data: its `sh tutorial` blocks, each with the exit code and output lines it shows.

``docs/tutorial.md`` marks a command block with the info string ``sh tutorial`` and the output it
shows with ``text output exit=N`` right after it. In an output block a line ``...`` stands for any
lines, and ``...`` inside a line for any text; every other line must appear, in order, as part of a
line of what the command printed (stdout and stderr together).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^```(.*)$")
OUTPUT = re.compile(r"^text output(?: exit=(\d+))?$")


@dataclass(frozen=True)
class Step:
    """One command block of the tutorial and what the tutorial says it prints."""

    #: The line of the tutorial the block starts on (1-based), for failure messages.
    line: int
    #: The bash text of the block.
    script: str
    #: The exit code the tutorial shows (0 when it shows no output block).
    exit_code: int
    #: The output lines the tutorial shows, ``...`` included.
    shown: tuple[str, ...]


def fenced_blocks(text: str) -> list[tuple[int, str, str]]:
    """``(line, info string, body)`` of every fenced block, in order."""
    blocks, lines, index = [], text.splitlines(), 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        body_start = index + 1
        end = body_start
        while end < len(lines) and lines[end] != "```":
            end += 1
        if end == len(lines):
            raise ValueError(f"line {index + 1}: a fenced block that never closes")
        blocks.append((index + 1, opening.group(1).strip(), "\n".join(lines[body_start:end]) + "\n"))
        index = end + 1
    return blocks


def steps(text: str) -> list[Step]:
    """The tutorial's steps; an output block that does not follow a step is an error (it would go unchecked)."""
    found: list[Step] = []
    pending: tuple[int, str] | None = None
    for line, info, body in fenced_blocks(text):
        shown = OUTPUT.match(info)
        if info == "sh tutorial":
            if pending is not None:
                found.append(Step(pending[0], pending[1], 0, ()))
            pending = (line, body)
        elif shown is not None:
            if pending is None:
                raise ValueError(f"line {line}: an output block with no `sh tutorial` block before it")
            found.append(Step(pending[0], pending[1], int(shown.group(1) or 0), tuple(body.splitlines())))
            pending = None
        elif pending is not None:  # any other block ends a step that showed no output
            found.append(Step(pending[0], pending[1], 0, ()))
            pending = None
    if pending is not None:
        found.append(Step(pending[0], pending[1], 0, ()))
    return found


def missing_lines(shown: tuple[str, ...], printed: str) -> list[str]:
    """The shown lines not found, in order, in ``printed`` (empty when the output matches)."""
    actual = printed.splitlines()
    cursor = 0
    for want in (s.strip() for s in shown):
        if not want or want == "...":
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in want.split("...")))
        while cursor < len(actual) and not pattern.search(actual[cursor]):
            cursor += 1
        if cursor == len(actual):
            return [want]
        cursor += 1
    return []


def load(path: Path) -> list[Step]:
    return steps(path.read_text(encoding="utf-8"))
