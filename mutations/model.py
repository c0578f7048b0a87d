"""A named mutation as a value: an id, a title, a target file and exactly one operation.

The catalog loader (``mutations.catalog``) builds these from YAML; ``mutations.apply`` turns one
into mutated source text (through its operator's entry in ``mutations.operators``), ``mutations.offtree``
into the mutated file of a copy of the project (``harness/project_copy.py`` makes the copy). Records are frozen: a mutation never changes after it was validated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Literal

from mutations import operators

#: The operations, then ``steps``: a static text for type checkers, the registry's names in its order
#: (``mutations/operators.py``; ``tests/mutations/test_operators.py`` checks that they agree).
OpKind = Literal["delete", "replace", "insert-before", "insert-after", "patch", "replace-def", "delete-call",
                 "replace-in-def", "steps"]
#: The operation keys of a catalog entry, in the order the docs list them: the registry's names.
OP_KINDS: tuple[OpKind, ...] = operators.names()  # type: ignore[assignment]
#: Operations anchored on a definition's qualified name (``Class.method``), which survive edits
#: anywhere else in the file: the registry's entries anchored on a name.
NAMED_OPS: tuple[OpKind, ...] = tuple(spec.name for spec in operators.OPERATORS  # type: ignore[misc]
                                      if spec.anchoring == "name")
#: The key of an entry whose operations are a list, applied in order to the same target.
STEPS: OpKind = "steps"


@dataclass(frozen=True)
class Location:
    """Where a value was written in a YAML file, so an error can point at it."""

    #: The file, as shown to the user (relative to the project root when inside it).
    file: str
    #: 1-based line (0 when unknown).
    line: int = 0
    #: 1-based column (0 when unknown).
    column: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}" if self.line else self.file


@dataclass(frozen=True)
class Mutation:
    """One named mutation, validated against the catalog's rules (not yet against the code)."""

    #: Stable readable id (``^[a-z0-9][a-z0-9._-]*$``), unique across the catalog.
    id: str
    #: One line saying what the mutation breaks.
    title: str
    #: The mutated file, relative to the project root, POSIX separators, always a ``.py`` file.
    target: str
    #: Which operation (one of ``OP_KINDS``), or ``steps``: several, in ``steps``.
    op: OpKind
    #: Where the entry was written.
    location: Location
    #: The exact source text the operation is anchored on (deleted / replaced text, or the anchor
    #: of an insertion); empty for ``patch``.
    anchor: str = ""
    #: The replacement (``replace``) or inserted text (``insert-*``); empty for ``delete``/``patch``.
    text: str = ""
    #: 1-based occurrence of the anchor to use; ``None`` means "the anchor must match exactly once".
    occurrence: int | None = None
    #: The unified diff text (``patch`` only).
    patch: str | None = None
    #: The ``.diff``/``.patch`` file the diff was read from, when it came from a file.
    patch_file: str | None = None
    #: The qualified name of the definition a named operation works in (``DenseDriver.step``).
    name: str | None = None
    #: For ``op == "steps"``: the operations, each a one-operation ``Mutation`` with the same id and
    #: target, applied in order (each to the text the previous one left).
    steps: tuple["Mutation", ...] = ()

    @property
    def ops(self) -> tuple[OpKind, ...]:
        """The operations this mutation applies, in order."""
        return tuple(step.op for step in self.steps) if self.steps else (self.op,)


@dataclass(frozen=True)
class Catalog:
    """Every named mutation of a project, by id, in the order the catalog files list them."""

    #: The mutations, catalog files sorted by name, entries in file order.
    mutations: tuple[Mutation, ...] = ()
    #: The catalog files that were read.
    files: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        ids = [m.id for m in self.mutations]
        if len(ids) != len(set(ids)):
            raise ValueError(f"a Catalog holds each mutation id once; got {ids}")

    def __contains__(self, mutation_id: object) -> bool:
        return any(m.id == mutation_id for m in self.mutations)

    def __iter__(self) -> Iterator[Mutation]:
        return iter(self.mutations)

    def __len__(self) -> int:
        return len(self.mutations)

    def ids(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.mutations)

    def get(self, mutation_id: str) -> Mutation:
        """The mutation with this id; ``KeyError`` naming the known ids otherwise."""
        for m in self.mutations:
            if m.id == mutation_id:
                return m
        raise KeyError(f"no mutation {mutation_id!r} in the catalog (known: {', '.join(self.ids()) or 'none'})")
