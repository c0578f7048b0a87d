"""Operations anchored on a definition's qualified name: they survive edits elsewhere in the file.

``replace-def`` swaps a whole function or method (decorators included) for new source, re-indented to
where the definition stands; ``delete-call`` removes the statement that calls a dotted name inside
the definition (exactly once, or at ``occurrence``); ``replace-in-def`` replaces text found exactly
once inside the definition's own lines. A name that is missing, or defined twice, is mutation rot:
the error says which, and where the catalog entry is.
"""

from __future__ import annotations

import ast
import textwrap

from mutations.errors import MutationRotError
from mutations.model import Mutation

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def find_definition(tree: ast.Module, qualname: str) -> list[Definition]:
    """Every definition whose qualified name (``Class.method``; nested functions too) is ``qualname``."""
    found: list[Definition] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{node.name}"
                if name == qualname:
                    found.append(node)
                walk(node.body, name + ".")
            elif isinstance(node, (ast.If, ast.Try, ast.With)):  # definitions under `if TYPE_CHECKING:` etc.
                walk(node.body, prefix)
                walk(getattr(node, "orelse", []), prefix)

    walk(tree.body, "")
    return found


def apply_named(text: str, mutation: Mutation) -> str:
    """``text`` with the named operation of ``mutation`` applied; ``MutationRotError`` when it cannot."""
    where = f"mutation {mutation.id!r} no longer applies"
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise MutationRotError(mutation.id, f"{where}: {mutation.target} does not parse ({exc.msg}, line {exc.lineno})") from None
    found = find_definition(tree, mutation.name or "")
    if len(found) != 1:
        what = "not found" if not found else f"defined {len(found)} times (lines {', '.join(str(d.lineno) for d in found)})"
        raise MutationRotError(mutation.id, (
            f"{where}: definition {mutation.name!r} {what} in {mutation.target}; update the name in the catalog entry "
            f"at {mutation.location}"))
    node = found[0]
    lines = text.splitlines(keepends=True)
    first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
    last = node.end_lineno or node.lineno
    start, end = sum(map(len, lines[:first])), sum(map(len, lines[:last]))
    if mutation.op == "replace-def":
        indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
        newline = "\r\n" if lines[first].endswith("\r\n") else "\n"
        body = textwrap.indent(textwrap.dedent(mutation.text).strip("\n") + "\n", indent)
        return text[:start] + body.replace("\n", newline) + text[end:]
    if mutation.op == "replace-in-def":
        span = text[start:end]
        hits = span.count(mutation.anchor)
        if hits != 1:
            raise MutationRotError(mutation.id, (
                f"{where}: the text to replace is found {hits} times inside {mutation.name} (lines {first + 1}-{last}) "
                f"of {mutation.target}, not once; widen or fix it in the catalog entry at {mutation.location}"))
        return text[:start] + span.replace(mutation.anchor, mutation.text) + text[end:]
    if mutation.op == "delete-call":
        return _delete_call(text, lines, node, mutation, where)
    raise ValueError(f"mutation {mutation.id!r}: {mutation.op!r} is not a named operation")


def _delete_call(text: str, lines: list[str], node: Definition, mutation: Mutation, where: str) -> str:
    calls = [stmt for stmt in ast.walk(node) if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
             and _dotted(stmt.value.func) == mutation.anchor]
    calls.sort(key=lambda s: (s.lineno, s.col_offset))
    if not calls or (mutation.occurrence is None and len(calls) > 1) or (mutation.occurrence or 0) > len(calls):
        lines_at = ", ".join(str(c.lineno) for c in calls) or "none"
        raise MutationRotError(mutation.id, (
            f"{where}: {len(calls)} statement(s) calling {mutation.anchor}() inside {mutation.name} of "
            f"{mutation.target} (lines {lines_at}); exactly one is needed, or `occurrence:`; fix the catalog entry "
            f"at {mutation.location}"))
    call = calls[(mutation.occurrence or 1) - 1]
    first, last = call.lineno - 1, call.end_lineno or call.lineno
    indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
    newline = "\r\n" if lines[first].endswith("\r\n") else "\n"
    siblings = _body_of(node, call)
    replacement = f"{indent}pass{newline}" if siblings == [call] else ""  # a body must not become empty
    return "".join(lines[:first]) + replacement + "".join(lines[last:])


def _body_of(root: ast.AST, stmt: ast.stmt) -> list[ast.stmt]:
    for parent in ast.walk(root):
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and stmt in block:
                return block
    return []


def _dotted(func: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
        return ".".join(reversed(parts))
    return ""
