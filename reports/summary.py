"""The one-line verdict of a result: its gate totals, a sweep's score, and the exit code it ended with."""

from __future__ import annotations

from reports.mutants import SweepResult
from reports.outcome import Report, Verdict


def gate_totals(report: Report) -> str:
    """``"37 PASS, 13 FAIL, 35 OWED"`` in the enum's order; ``"no gate judged"`` when there is no arm."""
    verdicts = report.verdicts()
    return ", ".join(f"{verdicts.count(v)} {v.value}" for v in Verdict if verdicts.count(v)) or "no gate judged"


def sweep_score(sweep: SweepResult) -> str:
    """``"87.5% (7 of 8 detected), 1 survivor"``: equivalent and owed mutants are out of the score."""
    detected, scored = sweep.counted()
    score = "no mutant scored" if sweep.score is None else f"{sweep.score:.1f}% ({detected} of {scored} detected)"
    survivors = len(sweep.of_status("survived", "no_coverage"))
    return f"{score}, {survivors} survivor{'' if survivors == 1 else 's'}"


def verdict(report: Report, exit_name: str, sweep: SweepResult | None = None) -> str:
    """``"seamgate: 3 PASS, 1 FAIL -> exit GATE_FAILED"``; a sweep's score joins it, and stands alone
    for a sweep's own result (which judges no gate)."""
    parts = []
    if report.outcomes or report.baseline_red or sweep is None:
        parts.append(gate_totals(report))
    if sweep is not None:
        parts.append(f"sweep {sweep_score(sweep)}")
    return f"seamgate: {'; '.join(parts)} -> exit {exit_name}"
