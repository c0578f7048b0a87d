"""A YAML document read strictly: plain data only, every value with its line and column.

``yaml.safe_load`` silently keeps the last of two equal keys and says nothing about where a value
was written. We therefore compose the node tree with ``yaml.SafeLoader`` and walk it ourselves:
duplicate keys are refused, any tag that is not a plain YAML type (``!!python/object...``, a
custom ``!tag``, a merge key) is refused before anything is constructed, and scalars are built with
SafeLoader's own constructors, so ``yes``/``1``/``1.5``/``null`` mean what they mean to safe_load.
Both the gate-file loader and the mutation catalog read their files through this module.
"""

from __future__ import annotations

import errno
import stat

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

#: Files larger than this are refused: a gate or catalog file is a page of text, not a data set.
MAX_BYTES = 1024 * 1024
#: Values (nodes) one document may expand to; stops alias bombs ("billion laughs") and cycles.
MAX_NODES = 100_000

_PLAIN_SCALAR_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"


@dataclass(frozen=True)
class Node:
    """One value of the document with where it was written.

    ``value`` is a ``str``/``int``/``float``/``bool``/``None`` for a scalar, a ``list[Node]`` for a
    sequence, and a ``dict[str, Node]`` for a mapping (insertion order kept).
    """

    #: The plain value (see the class docstring).
    value: Any
    #: 1-based line of the value.
    line: int
    #: 1-based column of the value.
    column: int
    #: For a mapping: key -> (line, column) of the key itself, so "unknown key" points at the key.
    key_marks: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def is_mapping(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_sequence(self) -> bool:
        return isinstance(self.value, list)

    def key_line_col(self, key: str) -> tuple[int, int]:
        return self.key_marks.get(key, (self.line, self.column))


class DocumentError(Exception):
    """The file could not be read as a plain-data YAML document; ``problems`` are located strings."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def read_document(path: Path, display: str) -> Node | None:
    """Read ``path`` (shown to the user as ``display``); ``None`` for an empty document.

    Raises ``DocumentError`` for an unreadable, oversized, non-UTF-8 or non-YAML file, a refused
    tag, or duplicate keys (all duplicate keys and refused tags of the file are reported at once).
    """
    text = _read_text(path, display)
    _check_nesting(text, display)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise DocumentError([_too_deep(display)]) from None
    except yaml.MarkedYAMLError as exc:
        raise DocumentError([_yaml_problem(display, exc)]) from None
    except yaml.YAMLError as exc:
        raise DocumentError([f"{display}: not valid YAML: {exc}; fix the syntax"]) from None
    if root is None:
        return None
    walker = _Walker(display)
    node = walker.walk(root, depth=0)
    if walker.problems:
        raise DocumentError(walker.problems)
    return node


#: How deep a seamgate YAML file may nest lists and mappings (a gate needs about 6 levels).
MAX_DEPTH = 64


def _too_deep(display: str) -> str:
    return (f"{display}: lists and mappings nested deeper than {MAX_DEPTH} levels; a seamgate file needs a "
            "few levels only: flatten the document")


def _check_nesting(text: str, display: str) -> None:
    """Refuse flow nesting (``[[[...``) or indentation deeper than ``MAX_DEPTH`` BEFORE composing:
    PyYAML's composer recurses once per level and would end in a RecursionError."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
    indents = {len(line) - len(line.lstrip(" -")) for line in text.splitlines() if line.strip()}
    if deepest > MAX_DEPTH or len(indents) > MAX_DEPTH:
        raise DocumentError([_too_deep(display)])


def _read_text(path: Path, display: str) -> str:
    """The file's text: a REGULAR file of at most ``MAX_BYTES``, read with that cap (a FIFO would
    block, ``/dev/zero`` would never end, a symlink loop cannot be opened)."""
    try:
        st = path.stat()
    except OSError as exc:
        why = "a symlink loop" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        raise DocumentError([f"{display}: cannot read the file: {why}; point to a regular YAML file"]) from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode)
                or stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise DocumentError([f"{display}: is {kind}, not a regular file; seamgate reads YAML from regular files only"])
    try:
        if st.st_size > MAX_BYTES:
            raise DocumentError([
                f"{display}: file is {st.st_size} bytes, over the {MAX_BYTES}-byte limit for a seamgate "
                "YAML file; split it into several files"
            ])
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise DocumentError([f"{display}: file grew past the {MAX_BYTES}-byte limit while read; split it"])
    except OSError as exc:
        raise DocumentError([f"{display}: cannot read the file: {exc.strerror or exc}"]) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise DocumentError([
            f"{display}:{line}:{column}: byte 0x{data[exc.start]:02x} is not UTF-8; "
            "save the file as UTF-8"
        ]) from None


def _yaml_problem(display: str, exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    where = f"{display}:{mark.line + 1}:{mark.column + 1}" if mark else display
    what = " ".join(part for part in (exc.context, exc.problem) if part)
    return f"{where}: not valid YAML: {what}; fix the syntax at this position"


class _Walker:
    """Turns composed nodes into ``Node`` values, collecting problems instead of stopping."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.problems: list[str] = []
        self.visited = 0
        self.constructor = yaml.SafeLoader("")

    def where(self, node: yaml.Node) -> str:
        return f"{self.display}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"

    def walk(self, node: yaml.Node, depth: int) -> Node:
        self.visited += 1
        if self.visited > MAX_NODES or depth > MAX_DEPTH:
            raise DocumentError([
                f"{self.where(node)}: the document expands to too many values (aliases nested or "
                "recursive); write the values out plainly"
            ])
        line, column = node.start_mark.line + 1, node.start_mark.column + 1
        if isinstance(node, yaml.MappingNode) and node.tag == _MAP_TAG:
            return self.mapping(node, depth)
        if isinstance(node, yaml.SequenceNode) and node.tag == _SEQ_TAG:
            return Node([self.walk(item, depth + 1) for item in node.value], line, column)
        if isinstance(node, yaml.ScalarNode) and node.tag in _PLAIN_SCALAR_TAGS:
            return Node(self.constructor.construct_object(node), line, column)
        self.problems.append(
            f"{self.where(node)}: YAML tag {_short_tag(node.tag)!r} is refused: seamgate files hold "
            "plain data only (strings, numbers, booleans, lists, mappings); remove the tag, or quote "
            "the value if it is meant as a string"
        )
        return Node(None, line, column)

    def mapping(self, node: yaml.MappingNode, depth: int) -> Node:
        values: dict[str, Node] = {}
        marks: dict[str, tuple[int, int]] = {}
        for key_node, value_node in node.value:
            key = self.walk(key_node, depth + 1).value
            mark = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if not isinstance(key, str):
                if key_node.tag in _PLAIN_SCALAR_TAGS:
                    self.problems.append(
                        f"{self.where(key_node)}: key {key!r} is a {type(key).__name__}, not a string; "
                        "quote it"
                    )
                continue
            if key in values:
                first = marks[key]
                self.problems.append(
                    f"{self.where(key_node)}: duplicate key {key!r} (first at line {first[0]}, column "
                    f"{first[1]}); keep one of them"
                )
                continue
            values[key] = self.walk(value_node, depth + 1)
            marks[key] = mark
        return Node(values, node.start_mark.line + 1, node.start_mark.column + 1, marks)


def _short_tag(tag: str) -> str:
    prefix = "tag:yaml.org,2002:"
    return "!!" + tag[len(prefix):] if tag.startswith(prefix) else tag
