"""Function bodies of a parsed module: the line spans a test case can execute, and the innermost one holding a line.

Both reaches read them: by line (``harness/reach/reach.py``: a changed line inside a body reaches the cases that ran
that body) and by name (``harness/reach/name_reach.py``: a statement naming an attribute inside a body).
"""

from __future__ import annotations

import ast


def function_bodies(tree: ast.AST) -> list[tuple[int, int]]:
    """The (first, last) lines of every function body in ``tree``, nested ones included."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            out.append((node.body[0].lineno, node.end_lineno or node.body[-1].lineno))
    return out


def innermost(bodies: list[tuple[int, int]], line: int) -> tuple[int, int] | None:
    """The shortest of ``bodies`` that holds ``line``; ``None`` when the line is outside every body."""
    holding = [b for b in bodies if b[0] <= line <= b[1]]
    return min(holding, key=lambda b: b[1] - b[0]) if holding else None
