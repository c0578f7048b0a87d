"""Source as evidence hashes it: a Python file's text without its comments, docstrings and blank lines.

Two readings of one file (``harness/results/evidence.py`` hashes them):

* ``normalized``: the statements. Comments, docstrings (a module's, class's or function's first
  statement when it is a string), trailing spaces and blank lines are cut; everything else stays,
  string literals that are not docstrings included. Editing a comment keeps the bytes; editing a
  statement changes them.
* ``skeleton``: ``normalized`` minus every function body (decorators and ``def`` lines stay). What a
  file's import runs: a file whose functions no case ran can still change a case through it (a
  constant, a class attribute, a decorator, an import).

Text, not ``ast.dump``: the GPU machine that writes evidence and the CPU machine that reads it may run
different Pythons, and ``ast.dump`` differs between them (3.12 added ``type_params`` fields), as does
``tokenize``'s stream for f-strings. Only the positions of comments (``tokenize``) and of docstrings
and bodies (``ast``) are used, and those are the same on 3.11 and 3.12. A file that does not parse,
or is not UTF-8, is taken as its raw bytes.
"""

from __future__ import annotations

import ast
import io
import re
import threading
import tokenize
from pathlib import Path

#: A cut: (first line, first column, last line, end column), 1-based lines, columns in characters.
Span = tuple[int, int, int, int]


def normalized(rel: str, data: bytes) -> bytes:
    """``data`` without comments, docstrings and blank lines (a ``.py`` file), else as it is."""
    return _reading(rel, data, bodies=False)


def skeleton(rel: str, data: bytes) -> bytes:
    """``normalized`` without function bodies: what importing the file runs."""
    return _reading(rel, data, bodies=True)


def _reading(rel: str, data: bytes, *, bodies: bool) -> bytes:
    if not rel.endswith(".py"):
        return b"raw\0" + data
    try:
        text = data.decode("utf-8")
        tree = ast.parse(text)
        lines = re.split(r"\r\n|\r|\n", text)  # the line ends ast and tokenize count, no others
        cuts = _comments(text) + _docstrings(tree, lines) + (_bodies(tree, lines) if bodies else [])
    except (SyntaxError, ValueError, UnicodeDecodeError, tokenize.TokenError):
        return b"raw\0" + data
    lines = _cut(lines, cuts)
    return b"py\0" + "\n".join(line.rstrip() for line in lines if line.strip()).encode()


def _comments(text: str) -> list[Span]:
    return [(t.start[0], t.start[1], t.end[0], t.end[1])
            for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]


def _docstrings(tree: ast.AST, lines: list[str]) -> list[Span]:
    owners = [n for n in ast.walk(tree)
              if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    return [_span(n.body[0], n.body[0], lines) for n in owners
            if n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
            and isinstance(n.body[0].value.value, str)]


def _bodies(tree: ast.AST, lines: list[str]) -> list[Span]:
    return [_span(n.body[0], n, lines) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.body]


def _span(first: ast.AST, last: ast.AST, lines: list[str]) -> Span:
    """From ``first``'s start to ``last``'s end, ast's UTF-8 byte columns turned into characters."""

    def column(line: int, byte: int) -> int:
        return len(lines[line - 1].encode()[:byte].decode("utf-8", errors="ignore"))

    end_line = last.end_lineno or first.lineno
    return (first.lineno, column(first.lineno, first.col_offset), end_line,
            column(end_line, last.end_col_offset if last.end_col_offset is not None else 0))


def _cut(lines: list[str], cuts: list[Span]) -> list[str]:
    """``lines`` with every span's characters removed (spans may overlap or nest)."""
    removed: dict[int, list[tuple[int, int]]] = {}
    for first, start, last, end in cuts:
        for line in range(first, last + 1):
            removed.setdefault(line, []).append((start if line == first else 0,
                                                 end if line == last else len(lines[line - 1])))
    out = []
    for number, line in enumerate(lines, start=1):
        if number in removed:
            keep = [True] * len(line)
            for start, end in removed[number]:
                keep[start:end] = [False] * len(keep[start:end])
            line = "".join(ch for ch, kept in zip(line, keep) if kept)
        out.append(line)
    return out


class SourceReader:
    """The two readings of a project's files, each made once (every gate and arm hashes the same files)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._made: dict[tuple[str, bool], bytes | None] = {}
        self._lock = threading.Lock()

    def normalized(self, rel: str) -> bytes | None:
        """``normalized`` of the file ``rel``; ``None`` when it is gone."""
        return self._reading(rel, False)

    def skeleton(self, rel: str) -> bytes | None:
        """``skeleton`` of the file ``rel``; ``None`` when it is gone."""
        return self._reading(rel, True)

    def _reading(self, rel: str, bodies: bool) -> bytes | None:
        with self._lock:
            if (rel, bodies) not in self._made:
                try:
                    data = (self.root / rel).read_bytes()
                except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                    data = None
                self._made[rel, bodies] = None if data is None else _reading(rel, data, bodies=bodies)
            return self._made[rel, bodies]
