"""The planner: gates -> checks (one per gate and arm) and the matrix rows they read.

Each row (a source state on one arm, under one environment) runs ONCE, over the union of the
selections of every check that reads it; every check of a mutation also reads its baseline row
(the working tree on the same arm), whose union therefore covers the mutation rows' selections.
Two gates that share a mutation share its run.

Choosing gates is deterministic: ``--gate ID`` keeps the named gates (an unknown id is a usage
error naming the known ones); ``--shard K/N`` (1 <= K <= N) keeps the gates whose index in the
id-sorted list is congruent to K-1 modulo N, so N CI jobs cover every gate exactly once whatever
order the gate files were read in.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Sequence

from harness.errors import CommandLineError
from harness.gates.model import Gate
from harness.plan.matrix import RowKey, union_select


@dataclass(frozen=True)
class BaselineKey:
    """A selection on the working tree for one arm: runs once, however many gates share it."""

    select: tuple[str, ...]
    #: The gate's environment as sorted pairs (hashable).
    env: tuple[tuple[str, str], ...]
    arm: str

    @classmethod
    def of(cls, gate: Gate, arm: str) -> BaselineKey:
        return cls(gate.select, tuple(sorted(gate.env.items())), arm)


@dataclass(frozen=True)
class Check:
    """One gate judged on one arm."""

    gate: Gate
    arm: str
    #: Why this arm cannot run here (the check is OWED without running); ``None`` when it can.
    owed: str | None = None

    @property
    def baseline(self) -> BaselineKey | None:
        """The baseline this check needs (none for a lane gate without a selection)."""
        return BaselineKey.of(self.gate, self.arm) if self.gate.select else None

    @property
    def proof_row(self) -> RowKey | None:
        """The row of the gate's ``proof`` mutation (a gate on the working tree must be able to fail)."""
        row = self.row
        return RowKey(self.gate.proof, row.arm, row.env) if row is not None and self.gate.proof else None

    @property
    def row(self) -> RowKey | None:
        """The matrix row this check reads (none for a lane gate, which runs its own children)."""
        if not self.gate.select or self.owed is not None:
            return None
        return RowKey(self.gate.source, self.arm, tuple(sorted(self.gate.env.items())))


@dataclass(frozen=True)
class Plan:
    """What one invocation will do, in order: baselines first, then checks."""

    checks: tuple[Check, ...]
    #: The baseline rows (the working tree on each arm and environment), in first-use order.
    baselines: tuple[RowKey, ...] = ()
    #: Every row to fill, baselines included, with the union selection it runs.
    rows: Mapping[RowKey, tuple[str, ...]] = field(default_factory=dict)

    @property
    def gates(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.gate.id for c in self.checks))

    def readers(self, row: RowKey) -> tuple[Check, ...]:
        """The checks that read ``row`` (for a baseline row: every check on its arm and environment)."""
        return tuple(c for c in self.checks if c.row is not None
                     and (c.row == row or c.row.baseline == row or c.proof_row == row))


def select_gates(gates: Sequence[Gate], ids: Iterable[str] = ()) -> list[Gate]:
    """The gates named by ``--gate`` (all when none), in file order."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return list(gates)
    known = {g.id for g in gates}
    unknown = [i for i in wanted if i not in known]
    if unknown:
        raise CommandLineError(f"--gate {', '.join(unknown)}: no such gate (known: {', '.join(sorted(known)) or 'none'})")
    return [g for g in gates if g.id in wanted]


def restrict_arms(gates: Sequence[Gate], arms: Iterable[str] = ()) -> list[Gate]:
    """Keep only ``--arm`` arms of each gate (all when none); a gate left with no arm is dropped."""
    wanted = set(arms)
    if not wanted:
        return list(gates)
    return [replace(g, arms=kept) for g in gates if (kept := tuple(a for a in g.arms if a in wanted))]


def shard_gates(gates: Sequence[Gate], shard: tuple[int, int] | None) -> list[Gate]:
    """The K-th of N shards of ``gates`` (1-based K), split by index in id order."""
    if shard is None:
        return list(gates)
    k, n = shard
    if not 1 <= k <= n:
        raise CommandLineError(f"--shard {k}/{n}: need 1 <= K <= N")
    ordered = sorted(gates, key=lambda g: g.id)
    mine = {g.id for i, g in enumerate(ordered) if i % n == k - 1}
    return [g for g in gates if g.id in mine]


def make_plan(gates: Sequence[Gate], *, ids: Iterable[str] = (), shard: tuple[int, int] | None = None,
              unavailable: Mapping[str, str] | None = None) -> Plan:
    """Gates -> checks; an arm named in ``unavailable`` (arm -> reason) is planned as OWED."""
    unavailable = unavailable or {}
    chosen = shard_gates(select_gates(gates, ids), shard)
    checks = tuple(Check(g, arm, unavailable.get(arm)) for g in chosen for arm in g.arms)
    selects: dict[RowKey, list[tuple[str, ...]]] = {}
    for check in checks:
        if check.row is not None:
            selects.setdefault(check.row.baseline, []).append(check.gate.select)
            if check.row.source.kind != "tree":
                selects.setdefault(check.row, []).append(check.gate.select)
            if check.proof_row is not None:
                selects.setdefault(check.proof_row, []).append(check.gate.select)
    rows = {key: union_select(parts) for key, parts in selects.items()}
    baselines = tuple(key for key in rows if key.source.kind == "tree")
    return Plan(checks=checks, baselines=baselines, rows=rows)
