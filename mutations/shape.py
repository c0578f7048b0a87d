"""Shape checks over a read YAML document, each failure a located message with its fix.

A loader walks its document and asks a ``ShapeChecker`` "is this a mapping with only these keys?",
"is this a non-empty string matching this pattern?". Each question returns the value (or ``None``)
and records a problem instead of raising, so one pass reports every problem of a file.
"""

from __future__ import annotations

import difflib
import re
from typing import Sequence

from mutations.document import Node

#: Ids of gates and mutations: lowercase, digits, ``.``, ``_``, ``-``; readable in file names.
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


class ShapeChecker:
    """Collects located problems for one file."""

    def __init__(self, display: str) -> None:
        #: The file as shown to the user.
        self.display = display
        #: Problems found so far, each ``file:line:col: context: what — fix``.
        self.problems: list[str] = []

    def add(self, where: Node | tuple[int, int], context: str, message: str) -> None:
        line, column = (where.line, where.column) if isinstance(where, Node) else where
        self.problems.append(f"{self.display}:{line}:{column}: {context}: {message}")

    def keys(self, node: Node, context: str, allowed: Sequence[str], required: Sequence[str] = ()) -> bool:
        """True when ``node`` is a mapping; records unknown keys (with a suggestion) and missing ones."""
        if not node.is_mapping:
            self.add(node, context, f"expected a mapping, got {describe(node.value)}")
            return False
        for key in node.value:
            if key not in allowed:
                self.add(node.key_line_col(key), context, unknown_key_message(key, allowed))
        for key in required:
            if key not in node.value:
                self.add(node, context, f"missing required key {key!r}; add it")
        return True

    def string(self, node: Node, context: str, key: str, pattern: re.Pattern[str] | None = None) -> str | None:
        """A non-empty string (matching ``pattern`` when given), else ``None`` and a problem."""
        value = node.value
        if not isinstance(value, str):
            self.add(node, context, f"{key!r} must be a string, got {describe(value)}; quote it")
            return None
        if not value.strip():
            self.add(node, context, f"{key!r} must not be empty")
            return None
        if pattern is not None and not pattern.match(value):
            self.add(node, context, f"{key!r} value {value!r} does not match {pattern.pattern}; "
                                    "use lowercase letters, digits, '.', '_' and '-'")
            return None
        return value

    def integer(self, node: Node, context: str, key: str, minimum: int) -> int | None:
        """An int >= ``minimum`` (a bool is not an int here), else ``None`` and a problem."""
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int):
            self.add(node, context, f"{key!r} must be an integer >= {minimum}, got {describe(value)}")
            return None
        if value < minimum:
            self.add(node, context, f"{key!r} must be >= {minimum}, got {value}")
            return None
        return value

    def boolean(self, node: Node, context: str, key: str) -> bool | None:
        if not isinstance(node.value, bool):
            self.add(node, context, f"{key!r} must be true or false, got {describe(node.value)}")
            return None
        return node.value

    def choice(self, node: Node, context: str, key: str, allowed: Sequence[str]) -> str | None:
        value = node.value
        if isinstance(value, str) and value in allowed:
            return value
        hint = suggestion(value, allowed) if isinstance(value, str) else ""
        self.add(node, context, f"{key!r} must be one of {', '.join(allowed)}; got {describe(value)}{hint}")
        return None

    def string_list(self, node: Node, context: str, key: str) -> list[tuple[str, Node]] | None:
        """A non-empty list of non-empty strings, each with its node (for located follow-up checks)."""
        if not node.is_sequence:
            self.add(node, context, f"{key!r} must be a list of strings, got {describe(node.value)}")
            return None
        if not node.value:
            self.add(node, context, f"{key!r} must not be an empty list")
            return None
        items = [(self.string(item, context, f"{key}[{i}]"), item) for i, item in enumerate(node.value)]
        good = [(value, item) for value, item in items if value is not None]
        return good if len(good) == len(items) else None

    def string_map(self, node: Node, context: str, key: str, key_pattern: re.Pattern[str]) -> dict[str, str] | None:
        """A mapping of strings to strings (environment variables); numbers must be quoted."""
        if not node.is_mapping:
            self.add(node, context, f"{key!r} must be a mapping of strings, got {describe(node.value)}")
            return None
        result: dict[str, str] = {}
        for name, value in node.value.items():
            if not key_pattern.match(name):
                self.add(node.key_line_col(name), context, f"{key!r} name {name!r} does not match {key_pattern.pattern}")
            elif not isinstance(value.value, str):
                self.add(value, context, f"{key}.{name} must be a string, got {describe(value.value)}; "
                                         f"quote it: {name}: \"{_plain(value.value)}\"")
            else:
                result[name] = value.value
        return result if len(result) == len(node.value) else None


def unknown_key_message(key: str, allowed: Sequence[str]) -> str:
    return f"unknown key {key!r}{suggestion(key, allowed)} (allowed: {', '.join(allowed)})"


def suggestion(value: str, allowed: Sequence[str]) -> str:
    close = difflib.get_close_matches(value, list(allowed), n=1, cutoff=0.6)
    return f" — did you mean {close[0]!r}?" if close else ""


def describe(value: object) -> str:
    """How a YAML value reads in an error: ``a string 'x'``, ``an integer 3``, ``a list``, ``nothing``."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"an integer {value}"
    if isinstance(value, float):
        return f"a number {value}"
    if isinstance(value, str):
        return f"a string {value!r}"
    if isinstance(value, list):
        return "a list"
    return "a mapping"


def _plain(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return "" if value is None else str(value)


def versioned_list(root: Node, shape: ShapeChecker, context: str, list_key: str, version: int, noun: str,
                   extra: Sequence[str] = ()) -> list[Node]:
    """The entries of a ``{version: N, <list_key>: [...]}`` document (gate files, catalogs), checked;
    ``extra`` names other top-level keys the document may hold (its reader reads them)."""
    if not shape.keys(root, context, ("version", list_key, *extra), required=("version", list_key)):
        return []
    found = root.value.get("version")
    if found is not None and (found.value != version or isinstance(found.value, bool)):
        shape.add(found, context, f"'version' must be {version}, got {describe(found.value)}")
    listed = root.value.get(list_key)
    if listed is None:
        return []
    if not listed.is_sequence:
        shape.add(listed, context, f"'{list_key}' must be a list of {noun}, got {describe(listed.value)}")
        return []
    return listed.value
