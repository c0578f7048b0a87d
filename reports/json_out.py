"""JSON report: every arm outcome with its runs and provenance, written atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

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
                   "inferred": c.inferred}
                  for c in run.cases],
    }


def outcome_to_json(outcome: ArmOutcome) -> dict[str, Any]:
    return {
        "gate": outcome.gate, "arm": outcome.arm, "kind": outcome.kind, "title": outcome.title,
        "verdict": outcome.verdict.value, "message": outcome.message,
        "provenance": outcome.provenance.to_json() if outcome.provenance else None,
        "facts": dict(outcome.facts), "runs": [run_to_json(r) for r in outcome.runs],
    }


def report_to_json(report: Report, exit_code: int) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION, "exit_code": exit_code, "interrupted": report.interrupted,
        "unfinished": list(report.unfinished),
        "baseline_red": [run_to_json(r) for r in report.baseline_red],
        "outcomes": [outcome_to_json(o) for o in report.outcomes],
    }


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temp file beside ``path`` and rename it over: readers never see half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, report: Report, exit_code: int) -> None:
    write_atomic(path, json.dumps(report_to_json(report, exit_code), indent=2, default=str) + "\n")
