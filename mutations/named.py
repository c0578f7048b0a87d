"""Operations anchored on a definition's qualified name: they survive edits elsewhere in the file.

``replace-def`` swaps a whole function or method (decorators included) for new source, re-indented to
where the definition stands; ``delete-call`` removes the statement that calls a dotted name inside
the definition (exactly once, or at ``occurrence``); ``replace-in-def`` replaces text found exactly
once inside the definition's own lines. Their entries and edits are in ``mutations.operators``; this
module finds the definition they work in (``locate``) with the standard library's ``ast``. A name that is
missing, or defined twice, is mutation rot: the error says which, and where the catalog entry is.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mutations.errors import MutationRotError

if TYPE_CHECKING:
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


@dataclass(frozen=True)
class Located:
    """The one definition a named operation works in, and where it stands in the source text."""

    #: The definition.
    node: Definition
    #: The source's lines, line ends kept (``"".join(lines)`` is the source).
    lines: tuple[str, ...]
    #: Index in ``lines`` of its first line (its first decorator's, when it has any).
    first: int
    #: Index in ``lines`` just past its last line.
    last: int
    #: The rot message's opening: ``mutation 'ID' no longer applies``.
    where: str

    @property
    def start(self) -> int:
        """Offset of its first line in the source."""
        return sum(map(len, self.lines[: self.first]))

    @property
    def end(self) -> int:
        """Offset just past its last line."""
        return sum(map(len, self.lines[: self.last]))


def locate(text: str, mutation: Mutation) -> Located:
    """The one definition named ``mutation.name`` in ``text``; ``MutationRotError`` when it is missing or twice."""
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
    first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
    return Located(node, tuple(text.splitlines(keepends=True)), first, node.end_lineno or node.lineno, where)


def calls_to(node: Definition, name: str) -> list[ast.Expr]:
    """The statements inside ``node`` that are a call of the dotted ``name``, in source order."""
    calls = [stmt for stmt in ast.walk(node) if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
             and dotted(stmt.value.func) == name]
    calls.sort(key=lambda s: (s.lineno, s.col_offset))
    return calls


def body_of(root: ast.AST, stmt: ast.stmt) -> list[ast.stmt]:
    """The statement list (``body``, ``orelse``, ...) under ``root`` that holds ``stmt``."""
    for parent in ast.walk(root):
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and stmt in block:
                return block
    return []


def dotted(func: ast.expr) -> str:
    """``self.scope.note_fork`` for that call target; "" when it is not a dotted name."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
        return ".".join(reversed(parts))
    return ""
