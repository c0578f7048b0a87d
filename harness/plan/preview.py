"""``seamgate run --dry-run``: the plan, printed before anything runs.

For each row of the kill matrix: its source state and arm, the cases its gates read, how many would
run and how many would be inferred, and an estimated time. Cases to run and durations come from
the newest kept run holding each row's baseline (``.seamgate/runs/``: the baselines' recorded reach
and every cell's duration); without one, every case of every row is counted as running and the time is unknown.
Arms that need hardware are listed as planned; whether this machine has it is probed at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from harness.plan.matrix import RowKey, in_select, selects_all
from harness.plan.planner import Plan
from harness.reach.reach import Reach, cases_to_run
from harness.results.reuse import KeptRuns
from harness.results.workspace import reach_file_name
from reports.outcome import counted

#: Seconds a run costs beyond its cases (start-up, collection), when the kept run cannot say.
RUN_OVERHEAD = 3.0


@dataclass(frozen=True)
class RowPreview:
    key: RowKey
    select: tuple[str, ...]
    #: Cases of the row (``None``: unknown, no kept run).
    cases: int | None
    #: Cases that would run (``None``: unknown).
    run: int | None
    #: Estimated seconds (``None``: unknown).
    seconds: float | None
    #: The kept run the figures come from (``None``: none holds this row's baseline).
    source: Path | None = None


def preview(plan: Plan, kept: KeptRuns, changes: Mapping[str, Mapping[str, tuple[str, str]] | None], *,
            prove: bool, project: Path | None = None) -> list[RowPreview]:
    """One ``RowPreview`` per row; ``changes`` maps a mutation id to its changed files' texts; ``project``
    is where a changed class attribute's readers are looked up.

    Each row's cases and durations come from the newest kept run whose baseline row selected
    everything the row selects (and, for a mutation row, that recorded the baseline's reach): a
    partial run since (``--gate``, ``--prove``, ``mutations reds``) does not hide an older full one.
    """
    out = []
    for key, select in plan.rows.items():
        mutation = key.source.kind == "mutation" and not prove
        found = kept.newest(key.baseline.label(), lambda row, s=select: selects_all(row.get("select"), s),
                            having=reach_file_name(key.baseline) if mutation else None)
        if found is None:
            out.append(RowPreview(key, select, None, None, None))
            continue
        baseline = {c["nodeid"]: c for c in found.data["run"].get("cases", ()) if isinstance(c, Mapping)}
        ids = [n for n in baseline if in_select(n, select)]
        run: Sequence[str] = ids
        if mutation:
            reach = Reach.read(found.folder / reach_file_name(key.baseline))
            chosen = cases_to_run(changes.get(key.source.mutation or ""), reach, ids, project=project)
            run = ids if chosen is None else sorted(chosen)
        runs = 2 if key.source.kind == "tree" else 1
        seconds = runs * (RUN_OVERHEAD + sum(float(baseline[n].get("duration") or 0.0) for n in run))
        out.append(RowPreview(key, select, len(ids), len(run), seconds, found.folder))
    return out


def render(plan: Plan, rows: Sequence[RowPreview], jobs: int) -> str:
    lanes = sum(1 for c in plan.checks if c.row is None and c.owed is None)
    sources = sorted({str(r.source) for r in rows if r.source is not None})
    lines = [f"plan: {counted(len(plan.checks), 'check')} of {counted(len(plan.gates), 'gate')}; {counted(len(rows), 'row')} "
             f"(each source state runs once per arm); {lanes} lane checks run their own children",
             f"reach and durations from: {', '.join(sources) or 'no kept run (every case counts as running)'}"]
    for row in rows:
        if row.key.arm != "cpu-emulated":
            lines.append(f"  {row.key.label()}: needs {row.key.arm} hardware (probed at run time; OWED without it)")
        elif row.cases is None:
            lines.append(f"  {row.key.label()}: {len(row.select)} select entries; cases unknown until a run")
            continue
        twice = " (run twice: the flaky check)" if row.key.source.kind == "tree" else ""
        lines.append(f"  {row.key.label()}: {counted(row.cases, 'case')}, run {row.run}, inferred {row.cases - (row.run or 0)}, "
                     f"~{row.seconds:.0f} s{twice}")
    local = [r for r in rows if r.key.arm == "cpu-emulated"]
    known = [r.seconds for r in local if r.seconds is not None]
    if local and len(known) == len(local):
        lines.append(f"estimated time: ~{sum(known) / max(1, jobs):.0f} s with --jobs {jobs}")
    else:
        lines.append("estimated time: unknown (run once to record the baseline's reach and durations)")
    return "\n".join(lines)
