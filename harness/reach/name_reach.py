"""Reach of a changed class attribute: the cases that executed a line naming it, anywhere in the project.

A class-level assignment (``machinery = Machinery.SEAM`` in a class body) runs at import, so no case
executes it; its VALUE is seen wherever the attribute is read. A read names it: ``self.machinery``,
``Driver.machinery``, ``getattr(d, "machinery")``. So the cases that can see a changed value are those
that executed a statement naming the attribute, in any file of the project, tests included: each
such statement inside a function body is a region of its file (``harness/reach/reach.py``), met as any
changed body line is (a region that also ran at import or collection time makes reach unknown).

Reach is unknown (every case runs) when the name is READ outside every function body (at import: a
decorator, a default argument, another class-level expression), because that read ran in no case.
What this assumes beyond docs/runner.md's rules: nothing reads the attribute through a name built at
run time (``getattr(x, "mach" + "inery")``) or through generic introspection (``vars(cls)``,
``cls.__dict__``, ``inspect.getmembers``); ``harness/reach/reach.py`` refuses the cases where the language
itself reads class attributes generically (dataclasses, enums, named tuples, dunder names, decorated
classes, metaclasses).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from harness.project_copy import project_files
from harness.reach.bodies import function_bodies, innermost

#: A file's statements naming an attribute, as (first, last) line spans inside function bodies.
Spans = dict[str, list[tuple[int, int]]]


def name_spans(root: str, name: str) -> Spans | None:
    """Every statement of the project at ``root`` that names ``name``, by file; ``None`` when the
    name is read outside every function body (at import time), so what sees it is unknown."""
    spans: Spans = {}
    for rel in project_files(Path(root)):
        if not rel.endswith(".py"):
            continue
        try:
            stat = (Path(root) / rel).stat()
        except OSError:
            continue
        found = _spans_of(str(Path(root) / rel), stat.st_mtime_ns, stat.st_size, name)
        if found is None:
            return None
        if found:
            spans[rel] = list(found)
    return spans


@functools.lru_cache(maxsize=4096)
def _spans_of(path: str, mtime_ns: int, size: int, name: str) -> tuple[tuple[int, int], ...] | None:
    """One file's statements naming ``name`` (cached by the file's stat: an edited file is read again)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return ()  # a file Python cannot read is imported by nobody
    found = _file_spans(tree, name)
    return None if found is None else tuple(found)


def _file_spans(tree: ast.AST, name: str) -> list[tuple[int, int]] | None:
    bodies = function_bodies(tree)
    statements = [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    out: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        read = _names(node, name)
        if read is None:
            continue
        line = node.lineno
        body = innermost(bodies, line)
        if body is None:
            if read:
                return None  # read at import time: in no case's reach
            continue  # a store at class or module level (another class's own attribute)
        inside = [s for s in statements if s[0] <= line <= s[1] and body[0] <= s[0] and s[1] <= body[1]]
        out.append(min(inside, key=lambda s: s[1] - s[0]) if inside else body)
    return sorted(set(out))


def _names(node: ast.AST, name: str) -> bool | None:
    """Whether ``node`` names ``name``: ``True`` for a read (or a string spelling it), ``False`` for a
    store or delete, ``None`` when it does not name it."""
    if isinstance(node, ast.Attribute) and node.attr == name:
        return isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.Name) and node.id == name:
        return isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.Constant) and node.value == name:
        return True
    if isinstance(node, ast.keyword) and node.arg == name:
        return True  # Driver(machinery=...) or replace(obj, machinery=...)
    return None
