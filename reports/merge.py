"""Shard merge: the parts of one ``seamgate run --shard K/N`` run joined into one result, or refused.

Each part's ``outcomes.json`` records its ``shard`` (K and N) and the ``plan`` digest of every gate
and arm before sharding. The parts of one run agree on N and on the plan, and hold each K from 1
to N exactly once. A part that is missing, given twice, of another N, of another plan, or not a
shard at all is named in a ``MergeError``: a merge never quietly drops or doubles a gate.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from reports.outcome import Report
from reports.results import KeptResult


class MergeError(ValueError):
    """The parts given cannot be one run's shards; the message names each offending part."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("cannot merge: " + "; ".join(self.problems))


def merge_problems(parts: Sequence[KeptResult]) -> list[str]:
    """Every reason ``parts`` are not the complete set of shards of one run (empty when they are)."""
    problems = [f"{p.folder} is not a shard (it was not run with --shard K/N)" for p in parts if p.shard is None]
    sharded = [p for p in parts if p.shard is not None]
    if not sharded:
        return problems or ["no part to merge"]
    n_of = Counter(p.shard[1] for p in sharded)
    n = n_of.most_common(1)[0][0]
    problems += [f"{p.label()} is one of {p.shard[1]} shards, the others of {n}" for p in sharded if p.shard[1] != n]
    plans = Counter(p.plan for p in sharded)
    plan = plans.most_common(1)[0][0]
    problems += [f"{p.label()} has no plan digest (written by an older seamgate); re-run that shard" for p in sharded
                 if not p.plan]
    problems += [f"{p.label()} was cut from another plan ({p.plan[:12]}, the others {plan[:12]}: other gates, "
                 "--gate or --arm)" for p in sharded if p.plan and plan and p.plan != plan]
    by_k: dict[int, list[KeptResult]] = {}
    for p in sharded:
        if p.shard[1] == n:
            by_k.setdefault(p.shard[0], []).append(p)
    for k, same in sorted(by_k.items()):
        if len(same) > 1:
            problems.append(f"shard {k}/{n} is given {len(same)} times: {', '.join(str(p.folder) for p in same)}")
    missing = [k for k in range(1, n + 1) if k not in by_k]
    problems += [f"shard {k}/{n} is missing" for k in missing]
    swept = [p for p in parts if p.sweep is not None]
    if len(swept) > 1:  # a sweep is not sharded: two would be two sweeps, and one would be lost
        problems.append(f"{len(swept)} parts hold a sweep ({', '.join(str(p.folder) for p in swept)}); "
                        "a merge keeps at most one: render each sweep on its own")
    return problems


def merge(parts: Sequence[KeptResult]) -> KeptResult:
    """One result holding every part's outcomes in shard order; ``MergeError`` unless the parts are complete."""
    problems = merge_problems(parts)
    if problems:
        raise MergeError(problems)
    ordered = sorted(parts, key=lambda p: p.shard[0])  # type: ignore[index]
    report = Report(
        outcomes=tuple(o for p in ordered for o in p.report.outcomes),
        baseline_red=tuple(r for p in ordered for r in p.report.baseline_red),
        interrupted=any(p.report.interrupted for p in ordered),
        unfinished=tuple(u for p in ordered for u in p.report.unfinished),
    )
    first = ordered[0]
    return KeptResult(source=first.source, report=report, exit_code=max(p.exit_code for p in ordered),
                      shard=None, plan=first.plan, sweep=next((p.sweep for p in ordered if p.sweep is not None), None))
