"""Mutation operators: the one registry, one entry per operator (its anchoring, its catalog fields, its edit).

Everything else about an operator is derived from ``OPERATORS``: ``OP_KINDS`` and ``NAMED_OPS`` of
``mutations/model.py``, the operation keys, field keys and rules the catalog reader accepts
(``mutations/catalog.py``), and how ``mutations/apply.py`` applies it: its entry's ``edit`` resolves it on the
target's source to ONE ``Edit`` (a span and its replacement), or raises ``MutationRotError``. ``model.OpKind``
is a static text (a type checker reads it), so ``tests/mutations/test_operators.py`` checks it against this
registry. A new operator is one entry here, with its edit function beside it; ``steps`` (several operations in
order) is not an operator but a list of them, read by the catalog and applied by ``mutations/apply.py``.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Literal

from mutations import named
from mutations.anchors import anchor_start
from mutations.errors import MutationRotError
from mutations.patch import PatchFormatError, PatchMismatch, parse_patch, place_patch

if TYPE_CHECKING:
    from mutations.model import Mutation

#: What an operator finds its place by: exact source text (``anchor``, ``occurrence``), a definition's
#: qualified name (``name``; it survives edits elsewhere in the file), or a unified diff's hunks (``patch``).
Anchoring = Literal["text", "name", "diff"]
#: The ``Mutation`` fields a catalog key of an operator can fill (``name`` is checked as a qualified name).
Slot = Literal["anchor", "text", "name"]


@dataclass(frozen=True)
class Edit:
    """One edit of a source text: ``text[start:end]`` becomes ``replacement``."""

    #: Offset where the replaced span starts.
    start: int
    #: Offset just past the replaced span (``start`` itself for an insertion).
    end: int
    #: What is written in place of the span (``""`` for a deletion).
    replacement: str
    #: What the user should know about how it applied: one line per patch hunk placed at an offset or with fuzz.
    notes: tuple[str, ...] = ()

    def apply(self, text: str) -> str:
        """``text`` with this edit made."""
        return text[: self.start] + self.replacement + text[self.end:]

    @classmethod
    def between(cls, old: str, new: str, notes: tuple[str, ...] = ()) -> Edit:
        """The one edit that turns ``old`` into ``new``: from their first difference to their last."""
        limit = min(len(old), len(new))
        start = 0
        while start < limit and old[start] == new[start]:
            start += 1
        tail = 0
        while tail < limit - start and old[-1 - tail] == new[-1 - tail]:
            tail += 1
        return cls(start, len(old) - tail, new[start:len(new) - tail], notes)


@dataclass(frozen=True)
class OperatorSpec:
    """One mutation operator, everything seamgate knows about it."""

    #: The operation key of a catalog entry (``delete``, ``replace-def``).
    name: str
    #: What it is anchored on; ``name`` ones are ``NAMED_OPS``; ``diff`` (only ``patch``) is read as a diff.
    anchoring: Anchoring
    #: Resolves it on the target's source to one edit; raises ``MutationRotError`` when it no longer applies.
    edit: Callable[[str, Mutation], Edit]
    #: Its catalog value is a mapping whose keys fill these ``Mutation`` fields (problems are reported in this
    #: order); ``()``: the value is one string, the anchor (or, for ``diff`` anchoring, the diff or its file).
    fields: tuple[tuple[str, Slot], ...] = ()
    #: The keys of ``fields`` an entry must write; ``None``: every one.
    required: tuple[str, ...] | None = None
    #: ``occurrence:`` picks which match to use; when false, an entry writing it is refused.
    occurrence: bool = True
    #: An entry whose anchor equals its text (it would change nothing) is refused.
    refuse_unchanged: bool = False

    def __post_init__(self) -> None:
        slots = [slot for _, slot in self.fields]
        if len(set(self.keys)) != len(self.keys) or len(set(slots)) != len(slots):
            raise ValueError(f"operator {self.name!r}: each key and each Mutation field once in fields; got {self.fields}")
        if not set(self.required_keys) <= set(self.keys):
            raise ValueError(f"operator {self.name!r}: required keys {self.required_keys} are not all in fields {self.keys}")
        if self.anchoring == "diff" and self.fields:
            raise ValueError(f"operator {self.name!r}: a diff is one string (inline or a file name); drop its fields")
        if self.refuse_unchanged and not {"anchor", "text"} <= set(slots):
            raise ValueError(f"operator {self.name!r}: refuse_unchanged compares anchor and text; give it both fields")

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys of its mapping, in order."""
        return tuple(key for key, _ in self.fields)

    @property
    def required_keys(self) -> tuple[str, ...]:
        """The keys an entry must write."""
        return self.keys if self.required is None else self.required


def _delete(text: str, mutation: Mutation) -> Edit:
    start = anchor_start(text, mutation)
    return Edit(start, start + len(mutation.anchor), "")


def _replace(text: str, mutation: Mutation) -> Edit:
    start = anchor_start(text, mutation)
    return Edit(start, start + len(mutation.anchor), mutation.text)


def _insert_before(text: str, mutation: Mutation) -> Edit:
    start = anchor_start(text, mutation)
    return Edit(start, start, mutation.text)


def _insert_after(text: str, mutation: Mutation) -> Edit:
    end = anchor_start(text, mutation) + len(mutation.anchor)
    return Edit(end, end, mutation.text)


def _patch(text: str, mutation: Mutation) -> Edit:
    """The hunks placed as ``git apply`` would, with offset and fuzz (``mutations.patch``), as one span."""
    try:
        result = place_patch(text, parse_patch(mutation.patch or ""))
        notes = tuple(p.describe() for p in result.offsets)
    except (PatchMismatch, PatchFormatError) as exc:
        raise MutationRotError(mutation.id, (
            f"mutation {mutation.id!r} no longer applies: patch {mutation.patch_file or '(inline)'} on "
            f"{mutation.target}: {exc}"
        )) from None
    return Edit.between(text, result.text, notes)


def _replace_def(text: str, mutation: Mutation) -> Edit:
    """The definition's lines (decorators included) become ``mutation.text``, re-indented to where it stands."""
    found = named.locate(text, mutation)
    head = found.lines[found.first]
    indent = head[: len(head) - len(head.lstrip())]
    newline = "\r\n" if head.endswith("\r\n") else "\n"
    body = textwrap.indent(textwrap.dedent(mutation.text).strip("\n") + "\n", indent)
    return Edit(found.start, found.end, body.replace("\n", newline))


def _replace_in_def(text: str, mutation: Mutation) -> Edit:
    """``mutation.anchor``, found exactly once in the definition's own lines, becomes ``mutation.text``."""
    found = named.locate(text, mutation)
    start, end = found.start, found.end
    span = text[start:end]
    hits = span.count(mutation.anchor)
    if hits != 1:
        raise MutationRotError(mutation.id, (
            f"{found.where}: the text to replace is found {hits} times inside {mutation.name} (lines "
            f"{found.first + 1}-{found.last}) of {mutation.target}, not once; widen or fix it in the catalog entry "
            f"at {mutation.location}"))
    at = start + span.find(mutation.anchor)
    return Edit(at, at + len(mutation.anchor), mutation.text)


def _delete_call(text: str, mutation: Mutation) -> Edit:
    """The statement calling the dotted name ``mutation.anchor`` in the definition goes; ``pass`` if it was alone."""
    found = named.locate(text, mutation)
    node, lines = found.node, found.lines
    calls = named.calls_to(node, mutation.anchor)
    if not calls or (mutation.occurrence is None and len(calls) > 1) or (mutation.occurrence or 0) > len(calls):
        lines_at = ", ".join(str(c.lineno) for c in calls) or "none"
        raise MutationRotError(mutation.id, (
            f"{found.where}: {len(calls)} statement(s) calling {mutation.anchor}() inside {mutation.name} of "
            f"{mutation.target} (lines {lines_at}); exactly one is needed, or `occurrence:`; fix the catalog entry "
            f"at {mutation.location}"))
    call = calls[(mutation.occurrence or 1) - 1]
    first, last = call.lineno - 1, call.end_lineno or call.lineno
    indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
    newline = "\r\n" if lines[first].endswith("\r\n") else "\n"
    replacement = f"{indent}pass{newline}" if named.body_of(node, call) == [call] else ""  # a body must not be empty
    return Edit(sum(map(len, lines[:first])), sum(map(len, lines[:last])), replacement)


#: Every mutation operator, in the order the docs and the "no operation" message list them.
OPERATORS: tuple[OperatorSpec, ...] = (
    OperatorSpec("delete", "text", _delete),
    OperatorSpec("replace", "text", _replace, fields=(("old", "anchor"), ("new", "text")), refuse_unchanged=True),
    OperatorSpec("insert-before", "text", _insert_before, fields=(("anchor", "anchor"), ("text", "text"))),
    OperatorSpec("insert-after", "text", _insert_after, fields=(("anchor", "anchor"), ("text", "text"))),
    OperatorSpec("patch", "diff", _patch, occurrence=False),
    OperatorSpec("replace-def", "name", _replace_def, fields=(("name", "name"), ("text", "text")), occurrence=False),
    OperatorSpec("delete-call", "name", _delete_call, fields=(("name", "name"), ("call", "anchor"))),
    OperatorSpec("replace-in-def", "name", _replace_in_def, fields=(("name", "name"), ("old", "anchor"), ("new", "text")),
                 occurrence=False, refuse_unchanged=True),
)


def names() -> tuple[str, ...]:
    """The operator names, in registry order (read at each call, so a test may register one)."""
    return tuple(spec.name for spec in OPERATORS)


def operator(name: str) -> OperatorSpec:
    """The entry of operator ``name``; ``KeyError`` when there is none."""
    for spec in OPERATORS:
        if spec.name == name:
            return spec
    raise KeyError(name)
