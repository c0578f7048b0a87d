"""JSON report: every arm outcome with its runs and provenance, written atomically (``reports/atomic.py``).

The layout is ``outcomes.json`` of a kept run and the output of ``seamgate report --format json``;
``harness/results/result_schema.json`` publishes it and ``reports.results`` reads it back. Optional keys:
``shard`` (``{"k", "n"}`` of a ``--shard K/N`` run), ``plan`` (digest of every gate and arm the
run was cut from, shared by all shards of one run) and ``sweep`` (``reports.mutants``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

from reports.atomic import write_atomic
from reports.mutants import SweepResult, sweep_to_json
from reports.outcome import ArmOutcome, Report, RunOutcome

#: Bumped when a reader would misread the layout.
SCHEMA_VERSION = 1


def run_to_json(run: RunOutcome) -> dict[str, Any]:
    return {
        "label": run.label, "end": run.end, "exit_code": run.exit_code, "wall": round(run.wall, 3),
        "session": round(run.session, 3), "detail": run.detail, "summary": run.summary(),
        "inferred": sum(1 for c in run.cases if c.inferred), "log": run.log,
        "cases": [{"nodeid": c.nodeid, "kind": c.kind, "message": c.message,
                   "assertions_passed": c.assertions_passed, "assertions_failed": c.assertions_failed,
                   "duration": round(c.duration, 3), "inferred": c.inferred,
                   "carried": c.carried}
                  for c in run.cases],
    }


def outcome_to_json(outcome: ArmOutcome) -> dict[str, Any]:
    return {
        "gate": outcome.gate, "arm": outcome.arm, "kind": outcome.kind, "title": outcome.title,
        "verdict": outcome.verdict.value, "message": outcome.message,
        "provenance": outcome.provenance.to_json() if outcome.provenance else None,
        "facts": dict(outcome.facts), "runs": [run_to_json(r) for r in outcome.runs],
    }


def report_to_json(report: Report, exit_code: int, *, shard: tuple[int, int] | None = None, plan: str = "",
                   sweep: SweepResult | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema": SCHEMA_VERSION, "exit_code": exit_code, "interrupted": report.interrupted,
        "unfinished": list(report.unfinished),
        "baseline_red": [run_to_json(r) for r in report.baseline_red],
        "outcomes": [outcome_to_json(o) for o in report.outcomes],
    }
    if shard is not None:
        data["shard"] = {"k": shard[0], "n": shard[1]}
    if plan:
        data["plan"] = plan
    if sweep is not None:
        data["sweep"] = sweep_to_json(sweep)
    return data


def plan_digest(checks: Iterable[tuple[str, str]]) -> str:
    """sha256 of the sorted ``(gate, arm)`` pairs of a whole plan: the shards of one run agree on it."""
    digest = hashlib.sha256()
    for gate, arm in sorted(set(checks)):
        digest.update(f"{gate}\0{arm}\n".encode())
    return digest.hexdigest()


def write_json(path: Path, report: Report, exit_code: int, *, shard: tuple[int, int] | None = None, plan: str = "",
               sweep: SweepResult | None = None) -> None:
    data = report_to_json(report, exit_code, shard=shard, plan=plan, sweep=sweep)
    write_atomic(path, json.dumps(data, indent=2, default=str) + "\n")
