"""Filling a row of the kill matrix: its source state run once, over only the cases whose reach meets the change.

Every other case of the baseline is copied into the row, marked inferred; ``--prove``, or a change
whose reach cannot be known, runs every case. A row nothing it read changed for is reused whole, and
cells no change since reaches are carried (``harness/run/previous.py``). Rows run longest first:
``RowFilling.cost`` estimates each from its baseline's durations, computing the cases to run once.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from harness.gates.model import SourceState
from harness.plan.matrix import RowKey, fill, view
from harness.plan.planner import Check
from harness.reach.reach import Reach, cases_to_run
from harness.rows.executor import Run
from harness.rows.time_limits import row_limit
from harness.run.previous import PreviousRuns
from harness.run.row_result import RowResult
from harness.run.signals import Interrupted
from harness.run.trees import Trees, text_of
from harness.zygote import ENV as ZYGOTE_ENV
from reports.outcome import RunOutcome, counted

if TYPE_CHECKING:
    from harness.run.runner import RunOptions


class RowFilling:
    """One run's filling of its non-baseline rows, reading the session's ``rows`` and ``reach`` (shared)."""

    def __init__(self, options: RunOptions, copies: Trees, previous: PreviousRuns, *,
                 rows: dict[RowKey, RowResult], reach: dict[RowKey, Reach | None],
                 execute: Callable[[Run], RunOutcome], without_flaky: Callable[[RunOutcome], RunOutcome]) -> None:
        self.options, self.copies, self.previous = options, copies, previous
        self.rows, self.reach = rows, reach
        #: The session's run of one pytest process, and its removal of the flaky baseline cases.
        self.execute, self.without_flaky = execute, without_flaky
        #: The cases each row will run, computed once when the rows are ordered (``cost``).
        self.planned_cases: dict[RowKey, frozenset[str] | None] = {}

    def cost(self, key: RowKey, select: tuple[str, ...]) -> float:
        """The seconds ``key``'s row should take: the baseline durations of the cases it will run.

        Rows run longest first (``--jobs`` at a time), so a wide row does not start last and run
        alone at the end. The tree and the cases to run are computed here once and kept for the row.
        """
        try:
            tree, baseline = self.copies.tree(key.source), view(self.baseline(key), select)
        except Interrupted:
            raise
        except Exception:  # noqa: BLE001 - the row itself reports it
            return 0.0
        if not tree.ok:
            return 0.0
        run_ids = None if self.options.prove else self.cases_to_run(key, tree.path, baseline)
        self.planned_cases[key] = run_ids
        return sum(c.duration or 0.0 for c in baseline.cases if run_ids is None or c.nodeid in run_ids)

    def fill_row(self, key: RowKey, select: tuple[str, ...], readers: Sequence[Check]) -> RowResult:
        """Run ``key``'s source state once over ``select``: only the cases that reach the change.

        Every other case of the baseline is copied into the row, marked inferred. ``--prove``, or
        a change whose reach cannot be known, runs every case.
        """
        made = self.copies.tree(key.source)
        if not made.ok:
            return RowResult.failed(made.error)
        tree, baseline = made.path, view(self.baseline(key), select)
        row_digest = self.previous.row_digest(key, select, tree, baseline)
        if (reused := self.previous.reuse_row(key, select, row_digest)) is not None:
            return RowResult.ran(self.without_flaky(reused))
        filled = self._fill(key, select, readers, tree, baseline)
        if filled.end == "completed":
            self.previous.remember(key, row_digest, filled, select)
        return RowResult.ran(filled)

    def _fill(self, key: RowKey, select: tuple[str, ...], readers: Sequence[Check], tree: Path,
              baseline: RunOutcome) -> RunOutcome:
        if key in self.planned_cases:
            run_ids = self.planned_cases[key]
        else:
            run_ids = None if self.options.prove else self.cases_to_run(key, tree, baseline)
        carried = self.previous.carried_row_cells(key, select, baseline, run_ids)
        if carried and run_ids is not None and not run_ids - set(carried):
            # Every case to run was run before on the same mutation, and no change since reaches it.
            ran = RunOutcome(key.label(), "completed", 0, tuple(carried.values()),
                             detail=f"{counted(len(carried), 'cell')} carried from the previous run (no change since reaches them)")
            return self.without_flaky(fill(ran, baseline, run_ids))
        timeout = row_limit(baseline, run_ids, [c.gate.timeout for c in readers])
        only = None if run_ids is None else run_ids - set(carried)
        env = dict(key.env)
        reach = self.reach.get(key.baseline)
        starters = reach.child_starters() if reach is not None else None
        if only is not None and starters is not None and not only & starters:
            # None of its cases started a child in the baseline: spare the run the zygote's fork
            # (~20 ms of copy-on-write faults a run); a child started all the same is a real interpreter.
            env[ZYGOTE_ENV] = "0"
        run = self.execute(Run(key.label(), tree, select, key.arm, env, timeout, only=only, write_bytecode=True,
                               skip=frozenset(carried) if run_ids is None else frozenset()))
        if carried and run.end == "completed":
            ran = {c.nodeid for c in run.cases}
            run = replace(run, cases=run.cases + tuple(c for n, c in carried.items() if n not in ran))
        if run_ids is None:
            return self.without_flaky(run)
        return self.without_flaky(fill(run, baseline, run_ids))

    def baseline(self, key: RowKey) -> RunOutcome:
        """The baseline row ``key`` reads (raises why, when it could not run)."""
        return self.rows[key.baseline].run()

    def cases_to_run(self, key: RowKey, tree: Path, baseline: RunOutcome) -> frozenset[str] | None:
        """The baseline cases whose recorded reach meets the change; ``None``: run every case."""
        files = self.copies.changed_files(key.source)
        original = self.copies.tree(SourceState()).path  # None: the working tree's copy could not be made
        changes = None if files is None or original is None else \
            {rel: (text_of(original / rel), text_of(tree / rel)) for rel in files}
        return cases_to_run(changes, self.reach.get(key.baseline), (c.nodeid for c in baseline.cases),
                            project=original)
