"""The kill matrix: rows are source states on one arm, columns are test cases, cells are outcomes.

A row is filled by ONE pytest run over the union of the selections of every gate that reads it;
a gate reads its part of a row through ``view(row, select)``. In a mutation's row, the cases whose
baseline reach misses the change are not run: their cells are copied from the baseline row and
marked ``inferred`` (``fill``), in the matrix and in every report.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Iterable, Sequence

from harness.gates.model import SourceState
from reports.outcome import CaseOutcome, RunOutcome, counted


@dataclass(frozen=True)
class RowKey:
    """One row of the matrix: a source state, on one arm, under one environment."""

    source: SourceState
    arm: str
    #: The gates' environment as sorted pairs (hashable).
    env: tuple[tuple[str, str], ...] = ()

    @property
    def baseline(self) -> RowKey:
        """The row of the working tree with the same arm and environment."""
        return RowKey(SourceState(), self.arm, self.env)

    def label(self) -> str:
        env = " ".join(f"{k}={v}" for k, v in self.env)
        return f"{self.source.label()} {self.arm}" + (f" {env}" if env else "")


def _covers(entry: str, other: str) -> bool:
    """``entry`` selects everything ``other`` selects (a folder, a file, a node id prefix)."""
    return other == entry or other.startswith((entry + "/", entry + "::", entry + "["))


def union_select(selects: Iterable[Sequence[str]]) -> tuple[str, ...]:
    """One pytest selection covering every entry of ``selects``, with no entry covered twice."""
    entries = list(dict.fromkeys(e.rstrip("/") for select in selects for e in select))
    return tuple(e for e in entries if not any(o != e and _covers(o, e) for o in entries))


def selects_all(kept: object, select: Sequence[str]) -> bool:
    """Whether the selection ``kept`` (a kept row's JSON list) covers every entry of ``select``."""
    if not isinstance(kept, list):
        return False
    return all(any(_covers(str(k).rstrip("/"), e.rstrip("/")) for k in kept) for e in select)


def grouped_by_folder(select: Sequence[str]) -> tuple[str, ...]:
    """``select`` with every entry under one folder contiguous; folders and entries otherwise in the
    order given. pytest 9.1 drops a sub-folder's conftest fixtures for its files given after a file of
    an ancestor folder (pytest-dev/pytest#14964, #14971), so a run never hands pytest that order."""
    first: dict[tuple[str, ...], int] = {}
    parts = [PurePosixPath(entry.split("::")[0]).parts for entry in select]
    for index, entry_parts in enumerate(parts):
        for k in range(1, len(entry_parts) + 1):
            first.setdefault(entry_parts[:k], index)
    keys = [tuple(first[p[:k]] for k in range(1, len(p) + 1)) + (i,) for i, p in enumerate(parts)]
    return tuple(entry for _, entry in sorted(zip(keys, select), key=lambda pair: pair[0]))


def in_select(nodeid: str, select: Sequence[str]) -> bool:
    """Whether a case (or a collection error reported for a file or folder) belongs to ``select``."""
    for entry in select:
        entry = entry.rstrip("/")
        if _covers(entry, nodeid) or (nodeid and _covers(nodeid, entry)) or nodeid in ("", "."):
            return True
    return False


def view(row: RunOutcome, select: Sequence[str]) -> RunOutcome:
    """The part of ``row`` a gate selecting ``select`` reads, with the exit code pytest would give it."""
    cases = tuple(c for c in row.cases if in_select(c.nodeid, select))
    if row.end != "completed":
        return replace(row, cases=cases)
    return replace(row, cases=cases, exit_code=exit_code_of(cases))


def exit_code_of(cases: Sequence[CaseOutcome]) -> int:
    """The exit code pytest gives these cases: 5 for none, 1 for any failure or error, else 0."""
    if not cases:
        return 5
    return 1 if any(c.kind in ("failed", "error") for c in cases) else 0


def fill(ran: RunOutcome, baseline: RunOutcome, run_ids: frozenset[str]) -> RunOutcome:
    """A mutation's row: the cases it ran, plus every other baseline case copied and marked inferred.

    A case the run was asked to run but did not report (it crashed first) is left out, never inferred.
    """
    seen = {c.nodeid for c in ran.cases}
    inferred = tuple(replace(c, inferred=True, carried=False) for c in baseline.cases
                     if c.nodeid not in run_ids and c.nodeid not in seen)
    cases = ran.cases + inferred
    return replace(ran, cases=cases, exit_code=exit_code_of(cases) if ran.end == "completed" else ran.exit_code)


def inferred_note(run: RunOutcome) -> str:
    """``"; 80 of 94 cases inferred from the baseline (their reach misses the change)"`` or ``""``,
    plus how many cells were carried from the previous run."""
    n = sum(1 for c in run.cases if c.inferred)
    carried = sum(1 for c in run.cases if c.carried)
    note = f"; {n} of {counted(len(run.cases), 'case')} inferred from the baseline (their reach misses the change)" if n else ""
    if carried:
        note += f"; {carried} of {counted(len(run.cases), 'cell')} carried from the previous run (no change since reaches them)"
    return note
