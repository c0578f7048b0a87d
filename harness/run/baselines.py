"""The baseline rows: each run twice in the working tree's copy, under its time limit, or taken from a kept run.

A case whose verdict differs between the two runs is FLAKY: never counted as red in any gate
(``without_flaky``), printed as such (``flaky_lines``). A baseline is red only for cases red in both
runs; a second run that did not finish makes it red as surely as the first. The first run records
every case's reach (not with ``--prove``, which infers nothing); cells no change since reaches are
carried from the kept run and a baseline nothing changed for is reused whole (``harness/run/previous.py``).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from harness.gates.model import SourceState
from harness.plan.matrix import RowKey
from harness.plan.planner import Plan
from harness.reach.reach import Reach
from harness.results.workspace import reach_file_name
from harness.rows.executor import Run
from harness.rows.time_limits import TimeLimit, baseline_limit
from harness.run.previous import PreviousRuns
from harness.run.row_result import RowResult
from harness.run.trees import Trees
from reports.outcome import RunOutcome, counted

if TYPE_CHECKING:
    from harness.run.runner import RunOptions


class Baselines:
    """One run's baseline rows, filled into the session's ``rows``, ``reach`` and ``flaky`` (shared, not copied)."""

    def __init__(self, options: RunOptions, copies: Trees, previous: PreviousRuns, *,
                 rows: dict[RowKey, RowResult], reach: dict[RowKey, Reach | None], flaky: dict[str, tuple[str, str]],
                 execute: Callable[[Run], RunOutcome], parallel: Callable[[list[Callable[[], Any]], str], list[Any]],
                 say: Callable[[str], None]) -> None:
        self.options, self.copies, self.previous = options, copies, previous
        self.rows, self.reach, self.flaky = rows, reach, flaky
        #: The session's run of one pytest process, its pool, and its progress lines.
        self.execute, self.parallel, self.say = execute, parallel, say

    def run(self, plan: Plan, kept: Path) -> None:
        """Each baseline row of ``plan`` runs TWICE (reach recorded into ``kept`` by the first): a case whose
        verdict differs between the two is flaky."""
        made = self.copies.tree(SourceState())
        if not made.ok:
            raise RuntimeError(f"cannot copy the working tree: {made.error}") from made.error
        tree = made.path
        keys = [key for key in plan.baselines if not self.previous.reuse_baseline(key, plan.rows[key])]
        reach_files = {key: None if self.options.prove else kept / reach_file_name(key) for key in keys}
        # Cells of the kept baseline that no change since reaches (``harness/reach/incremental.py``).
        carried = {key: self.previous.carried_cells(key, plan.rows[key]) for key in keys}
        thunks = [lambda k=k, n=n: self.execute(Run(
                      f"baseline{n} {k.arm} {' '.join(plan.rows[k])}", tree, plan.rows[k], k.arm, dict(k.env),
                      self.limit(plan, k).seconds,
                      reach=reach_files[k] if not n else None, skip=frozenset(carried[k]), write_bytecode=True))
                  for k in keys for n in ("", " (again)")]
        reused = len(plan.baselines) - len(keys)
        if keys:
            self.say(f"running {counted(len(keys), 'baseline')} twice each, the first recording reach"
                     + (f" ({reused} reused from the kept run)" if reused else ""))
        elif reused:
            self.say(f"the {counted(reused, 'baseline')} {'is' if reused == 1 else 'are'} reused from the kept run")
        started = time.monotonic()
        runs = self.parallel(thunks, "baselines")
        if keys:
            self.say(f"the baselines took {time.monotonic() - started:.1f} s; now the gates' rows")
        for first, second in zip(runs[::2], runs[1::2]):
            self.flaky.update(flaky_cases(first, second))
        # A second run that did not finish makes the baseline red as surely as the first.
        chosen = [first if second.end == "completed" else second for first, second in zip(runs[::2], runs[1::2])]
        for index, (key, run) in enumerate(zip(keys, chosen)):
            if run.end == "timeout":  # say which limit it was and where it comes from
                chosen[index] = run = replace(run, detail=f"TIMEOUT: {run.detail} ({self.limit(plan, key).source})")
            if carried[key] and run.end == "completed":
                run = self.previous.with_carried_cells(key, run, carried[key], reach_files[key])
            self.rows[key] = RowResult.ran(without_flaky(run, self.flaky))
            self.reach[key] = Reach.read(reach_files[key]) if reach_files[key] is not None else None
            if run.end == "completed":
                self.previous.remember(key, self.previous.baseline_digest(key, plan.rows[key]), self.rows[key].outcome,
                                       plan.rows[key])

    def limit(self, plan: Plan, key: RowKey) -> TimeLimit:
        """Seconds the baseline row ``key`` may take, and where that figure comes from (for its TIMEOUT message;
        ``harness/rows/time_limits.py``)."""
        return baseline_limit([c.gate.timeout for c in plan.checks
                               if c.owed is None and c.row is not None and c.row.baseline == key],
                              self.options.baseline_timeout)


def flaky_cases(first: RunOutcome, second: RunOutcome) -> dict[str, tuple[str, str]]:
    """Cases red (failed/error) in one baseline run and not in the other: nodeid -> (kind, kind)."""
    kinds = {c.nodeid: c.kind for c in second.cases}
    red = ("failed", "error")
    return {c.nodeid: (c.kind, kinds[c.nodeid]) for c in first.cases
            if c.nodeid in kinds and (c.kind in red) != (kinds[c.nodeid] in red)}


def without_flaky(run: RunOutcome, flaky: Mapping[str, tuple[str, str]]) -> RunOutcome:
    """``run`` minus the ``flaky`` cases (they are neither red nor green)."""
    if not flaky or not any(c.nodeid in flaky for c in run.cases):
        return run
    return replace(run, cases=tuple(c for c in run.cases if c.nodeid not in flaky))


def flaky_lines(flaky: Mapping[str, tuple[str, str]]) -> list[str]:
    """One line per flaky baseline case, for the end of the run's output."""
    return [f"FLAKY baseline case {nodeid}: {a}, then {b} in two baseline runs; not counted as red in any "
            f"gate (fix the test, or leave it out of the gates' select)" for nodeid, (a, b) in sorted(flaky.items())]
