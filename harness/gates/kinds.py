"""Gate kinds: the one registry, one entry per kind (its judge, its keys, its source rule, whether it can never fail).

Everything else about a kind is derived from ``KINDS``: the names the gate-file reader accepts
(``harness/gates/gatefile.py``), its key and source rules, the judge of each kind
(``harness/judge/judges.py``), the never-fail refusal (``harness/gates/can_fail.py``) and the kinds
table of ``docs/gates.md``. ``model.GateKind`` and ``gate_schema.json`` are static texts (a type
checker and an editor read them), so tests check them against this registry
(``tests/harness/test_gate_kinds.py``). A new kind is one entry here; a new way of judging is also
one judge in ``harness/judge/judges.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

#: The judges of ``harness/judge/judges.py``, by name.
JudgeName = Literal["red", "red-first", "lane"]
#: What a kind's source must be: anything (``tree`` by default), changed code (a mutation or a
#: ref: the unmigrated state), or a named mutation.
SourceRule = Literal["any", "changed", "mutation"]


@dataclass(frozen=True)
class KindSpec:
    """One gate kind, everything seamgate knows about it."""

    #: The name written as ``kind:`` in a gate file.
    name: str
    #: Which judge of ``harness/judge/judges.py`` decides its verdict.
    judge: JudgeName
    #: One line for the kinds table of ``docs/gates.md``.
    summary: str
    #: What its ``source`` must be.
    source: SourceRule = "any"
    #: The lane fields (``fingerprint``, ``control``, ``subject``, ``expect.lane``) are required and
    #: ``select`` is not; every other kind refuses them and needs ``select``.
    lane_fields: bool = False
    #: ``expect.green_after`` and ``collection_errors_are_red`` are allowed (red against old code).
    red_first_fields: bool = False
    #: Its judge runs children of its own instead of reading matrix rows (no ``proof`` then).
    runs_its_own: bool = False
    #: On the working tree without a ``proof`` it could never fail (its verdict reads only the
    #: baseline row, whose red stops the run), so ``seamgate validate`` refuses it.
    never_fails_without_proof: bool = True


#: Every gate kind, in the order the docs and the schema list them.
KINDS: tuple[KindSpec, ...] = (
    KindSpec("replay", "red", "the captured path replays: the selection is green (or exactly the expected cases red)"),
    KindSpec("isolation", "red", "a named mutation reds exactly the expected cases and nothing else",
             source="mutation"),
    KindSpec("rule", "red", "a named mutation breaking one rule is caught by the expected cases", source="mutation"),
    KindSpec("equivalence", "red", "graphed and eager results agree: the selection is green"),
    KindSpec("red-first", "red-first", "red against the unmigrated code with exact counts, then green on the "
             "working tree", source="changed", red_first_fields=True),
    KindSpec("lane-identity", "lane", "control and subject, each in a fresh child, give the same (or a "
             "different) work fingerprint", lane_fields=True, runs_its_own=True, never_fails_without_proof=False),
    KindSpec("platforms", "red", "the selection gives the expected verdict on each platform arm"),
)

#: Each kind by its name.
BY_NAME: Mapping[str, KindSpec] = {spec.name: spec for spec in KINDS}
#: The kind names, in registry order.
KIND_NAMES: tuple[str, ...] = tuple(spec.name for spec in KINDS)


def kind(name: str) -> KindSpec:
    """The entry of a kind the gate-file reader accepted (a ``KeyError`` names a kind that is not one)."""
    return BY_NAME[name]


def kinds_with(trait: str) -> str:
    """The kinds whose entry sets ``trait``, as a message writes them: ``kind 'red-first'``."""
    names = [spec.name for spec in KINDS if getattr(spec, trait)]
    return ("kind " if len(names) == 1 else "kinds ") + " or ".join(repr(name) for name in names)


def docs_table() -> str:
    """The kinds table of ``docs/gates.md``, as Markdown."""
    rows = ["| kind | judged by | source | what PASS means |", "|---|---|---|---|"]
    source = {"any": "any (on the working tree it needs `proof`)", "changed": "a mutation or a ref",
              "mutation": "a mutation"}
    for spec in KINDS:
        where = "any (runs its own children)" if spec.runs_its_own else source[spec.source]
        rows.append(f"| `{spec.name}` | `{spec.judge}` | {where} | {spec.summary} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(docs_table(), end="")
