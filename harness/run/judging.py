"""Judging one check: its gate's part of the rows handed to the judge of its kind, or its OWED arm resolved.

An OWED arm takes its verdict from another machine's records (``harness/results/evidence.py``); a check
whose tree or row could not be made is an ERROR saying why; an expected red case that is flaky in the
baseline cannot be judged. A verdict under which the user's tree changed is an ERROR (``TreeGuard``); a
PASS carries its provenance, the hash of the project files its cases ran.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path
from typing import Mapping, Sequence

from harness.judge.evaluate import error_outcome, expect_for_arm, owed_outcome
from harness.judge.judges import JUDGES, RUNS_ITS_OWN, Seen
from harness.plan.matrix import RowKey, in_select, inferred_note, view
from harness.plan.planner import Check
from harness.reach.reach import Reach
from harness.results.evidence import Record, resolve
from harness.results.platforms import Platform
from harness.rows.executor import Executor
from harness.rows.time_limits import row_limit
from harness.rows.tree_guard import TreeGuard
from harness.run.hashing import RunHashes
from harness.run.materialized import tree_error
from harness.run.previous import PreviousRuns
from harness.run.row_result import RowResult
from harness.run.trees import Trees
from reports.outcome import ArmOutcome, Verdict


class Judging:
    """One run's judging of its checks, reading the session's ``rows``, ``reach`` and ``flaky`` (shared)."""

    def __init__(self, project: Path, evidence: Mapping[tuple[str, str], Sequence[Record]], copies: Trees,
                 previous: PreviousRuns, hashing: RunHashes, executor: Executor, tree_guard: TreeGuard | None, *,
                 rows: dict[RowKey, RowResult], reach: dict[RowKey, Reach | None],
                 flaky: dict[str, tuple[str, str]]) -> None:
        self.project, self.evidence, self.copies, self.previous = project, evidence, copies, previous
        self.hashing, self.executor, self.tree_guard = hashing, executor, tree_guard
        self.rows, self.reach, self.flaky = rows, reach, flaky

    def judge(self, check: Check, platform: Platform) -> ArmOutcome:
        """The verdict of ``check`` on this machine (``platform``), once the rows it reads are filled."""
        gate, arm = check.gate, check.arm
        if check.owed is not None:
            records = self.evidence.get((gate.id, arm), ())
            if not records:
                return owed_outcome(gate, arm, check.owed)
            return resolve(owed_outcome(gate, arm, check.owed), list(records), self.hashing.current(gate, arm))
        own = f"gate {gate.id} {arm}"  # a lane-identity gate runs its own children
        with self.tree_guard.watch(own) if self.tree_guard else contextlib.nullcontext():
            outcome = self.judge_seen(check)
        if self.tree_guard is not None:
            outcome = self.tree_guard.verdict(outcome, [own] + [k.label() for k in (check.row, check.proof_row) if k])
        if outcome.verdict is Verdict.PASS:
            code_hash, files = self.hashing.measured(gate, arm, self.reached(check))
            outcome = replace(outcome, provenance=platform.provenance(arm, self.project, code_hash=code_hash,
                                                                      commit=self.hashing.commit(), hashed_files=files))
        return outcome

    def reached(self, check: Check) -> list[str] | None:
        """The project files the check's cases ran in its baseline (``harness/run/hashing.py``, ``reached_files``);
        ``None`` when unknown: a gate that runs its own children, no baseline, or no reach recorded."""
        if check.row is None or check.gate.kind in RUNS_ITS_OWN:
            return None
        baseline = self.rows.get(check.row.baseline)
        if baseline is None or not baseline.ok:
            return None
        cases = [c.nodeid for c in view(baseline.outcome, check.gate.select).cases]
        return self.hashing.reached(self.reach.get(check.row.baseline), cases, check.gate.select)

    def judge_seen(self, check: Check) -> ArmOutcome:
        """Read the gate's part of its rows, and hand it to the judge of its kind."""
        gate, arm = check.gate, check.arm
        judge = JUDGES[gate.kind]
        if gate.kind in RUNS_ITS_OWN:
            tree = self.copies.tree(gate.source)
            if not tree.ok:
                return error_outcome(gate, arm, tree.why(gate.source))
            return judge(gate, arm, Seen(executor=self.executor, tree=tree.path, timeout=row_limit(None, None, [gate.timeout])))
        row = self.rows[check.row]
        if not row.ok:
            return error_outcome(gate, arm, tree_error(gate.source, row.error))
        named_flaky = sorted(set(expect_for_arm(gate.expect, arm).red.nodeids or ()) & set(self.flaky))
        if named_flaky:
            return error_outcome(gate, arm, f"expected red case {', '.join(named_flaky)} is flaky in the baseline; "
                                            "it cannot be judged (fix the test, or expect another case)")
        subject = view(row.outcome, gate.select)
        dropped = sorted(nodeid for nodeid in self.flaky if in_select(nodeid, gate.select))
        proof = self.rows.get(check.proof_row) if check.proof_row is not None else None
        if proof is not None and not proof.ok:
            return error_outcome(gate, arm, tree_error(gate.proof, proof.error))
        outcome = judge(gate, arm, Seen(subject=subject, baseline=view(self.rows[check.row.baseline].run(), gate.select),
                                        proof=view(proof.outcome, gate.select) if proof is not None else None))
        note = inferred_note(subject)
        if check.row in self.previous.reused or check.row.baseline in self.previous.reused:
            note += "; rows reused from the previous run (nothing they read changed)"
        if dropped:
            note += f"; flaky, not counted: {', '.join(dropped)}"
        if note:
            outcome = replace(outcome, message=outcome.message + note,
                              facts={**outcome.facts, "inferred": sum(1 for c in subject.cases if c.inferred)})
        return outcome
