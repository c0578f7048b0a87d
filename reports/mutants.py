"""The sweep result model: automatically generated mutants as rows of the kill matrix, with every killer.

A *sweep* (``seamgate sweep``) turns each mutant that mutmut generates into one source state, runs
the cases that reach it WITHOUT fail-fast, and records every case that turned red: its *killers*.
This module is the contract between the sweep (which writes it) and the report renderers (which
read it): plain frozen data, no import of ``harness``, like ``reports.outcome``.

Kept as the ``"sweep"`` key of a kept run's ``outcomes.json`` (see ``sweep_to_json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

#: What became of one mutant.
#:  - ``killed``: at least one case that ran on the mutant failed;
#:  - ``survived``: every case that reaches it ran and passed;
#:  - ``no_coverage``: no case reaches the mutated line (a survivor the tests never touch);
#:  - ``equivalent``: a survivor a reviewed file marks equivalent, with a reason (out of the score);
#:  - ``timeout``: a run on the mutant passed its time limit (counted as killed, as mutmut does);
#:  - ``error``: the mutant broke import or collection (counted as killed: the suite noticed);
#:  - ``owed``: not run (interrupted, or the arm cannot run here), never counted as either.
MutantStatus = Literal["killed", "survived", "no_coverage", "equivalent", "timeout", "error", "owed"]

#: Statuses that count as detected in the score.
DETECTED: frozenset[str] = frozenset({"killed", "timeout", "error"})
#: Statuses that count as undetected in the score.
UNDETECTED: frozenset[str] = frozenset({"survived", "no_coverage"})

#: Bumped when a reader would misread the layout.
SWEEP_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class MutantOutcome:
    """One generated mutant and what the suite did to it."""

    #: mutmut's name for it, e.g. ``seam.scope.x_join_forks__mutmut_3``.
    id: str
    #: Path of the mutated file relative to the project root, ``seam/scope.py``.
    file: str
    #: 1-based line and column of the mutated text; ``end_line``/``end_column`` close the range.
    line: int
    column: int = 1
    end_line: int = 0
    end_column: int = 0
    #: The kind of change, e.g. ``operator``, ``number``, ``string``, ``argument`` (mutmut's operator name where known).
    mutator: str = ""
    #: The unified diff of the mutant against the unmutated file.
    diff: str = ""
    status: MutantStatus = "owed"
    #: Node ids of the cases that ran on this mutant and turned red (every one, not the first).
    killers: tuple[str, ...] = ()
    #: Node ids of the cases whose recorded reach covers the mutated line (the cases that ran).
    covered_by: tuple[str, ...] = ()
    #: How many cases were taken from the baseline instead of run (their reach misses the mutated line).
    inferred: int = 0
    #: Why it is equivalent (``equivalent``), or why it errored / is owed.
    reason: str = ""
    #: Wall seconds its run took (0.0 when nothing ran).
    wall: float = 0.0


@dataclass(frozen=True)
class SweepResult:
    """Every mutant of one sweep, the scope it covered, and how long it took."""

    #: Files or folders swept, relative to the project root.
    scope: tuple[str, ...]
    mutants: tuple[MutantOutcome, ...] = ()
    #: The arm the cases ran on (``cpu-emulated`` by default).
    arm: str = "cpu-emulated"
    wall: float = 0.0
    #: mutmut's version, for provenance.
    generator: str = ""
    facts: Mapping[str, Any] = field(default_factory=dict)

    def counted(self) -> tuple[int, int]:
        """``(detected, scored)``: equivalent and owed mutants leave the denominator."""
        detected = sum(1 for m in self.mutants if m.status in DETECTED)
        undetected = sum(1 for m in self.mutants if m.status in UNDETECTED)
        return detected, detected + undetected

    @property
    def score(self) -> float | None:
        """Detected / scored as a percentage; ``None`` when nothing was scored."""
        detected, scored = self.counted()
        return None if scored == 0 else 100.0 * detected / scored

    def of_status(self, *statuses: str) -> tuple[MutantOutcome, ...]:
        return tuple(m for m in self.mutants if m.status in statuses)


def mutant_to_json(m: MutantOutcome) -> dict[str, Any]:
    data = dict(m.__dict__)
    data["killers"] = list(m.killers)
    data["covered_by"] = list(m.covered_by)
    return data


def sweep_to_json(sweep: SweepResult) -> dict[str, Any]:
    detected, scored = sweep.counted()
    return {
        "schema": SWEEP_SCHEMA_VERSION, "scope": list(sweep.scope), "arm": sweep.arm,
        "wall": round(sweep.wall, 3), "generator": sweep.generator, "facts": dict(sweep.facts),
        "detected": detected, "scored": scored, "score": sweep.score,
        "mutants": [mutant_to_json(m) for m in sweep.mutants],
    }


def sweep_from_json(data: Mapping[str, Any]) -> SweepResult:
    """The inverse of ``sweep_to_json``; raises ``ValueError`` naming the key on a bad layout."""
    if data.get("schema") != SWEEP_SCHEMA_VERSION:
        raise ValueError(f"sweep schema {data.get('schema')!r} is not {SWEEP_SCHEMA_VERSION}: "
                         "re-run `seamgate sweep` with this version")
    fields = MutantOutcome.__dataclass_fields__
    mutants = []
    for i, raw in enumerate(data.get("mutants", [])):
        unknown = set(raw) - set(fields)
        if unknown or "id" not in raw or "file" not in raw or "line" not in raw:
            raise ValueError(f"mutants[{i}]: needs id, file and line, knows only {sorted(fields)}"
                             + (f"; unknown keys {sorted(unknown)}" if unknown else ""))
        values = dict(raw)
        values["killers"] = tuple(values.get("killers", ()))
        values["covered_by"] = tuple(values.get("covered_by", ()))
        mutants.append(MutantOutcome(**values))
    return SweepResult(scope=tuple(data.get("scope", ())), mutants=tuple(mutants),
                       arm=str(data.get("arm", "cpu-emulated")), wall=float(data.get("wall", 0.0)),
                       generator=str(data.get("generator", "")), facts=dict(data.get("facts", {})))
