"""Markdown report: the summary a CI job shows (e.g. appended to ``$GITHUB_STEP_SUMMARY``)."""

from __future__ import annotations

from pathlib import Path

from reports.json_out import write_atomic
from reports.outcome import Report, Verdict

_ICON = {Verdict.PASS: "✅", Verdict.FAIL: "❌", Verdict.ERROR: "💥", Verdict.TIMEOUT: "⏱️",
         Verdict.CRASH: "💥", Verdict.OWED: "🟡", Verdict.STALE: "🟡"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def report_to_markdown(report: Report, exit_name: str) -> str:
    """A heading with the totals and exit code, a baseline warning, then one row per gate and arm."""
    verdicts = report.verdicts()
    counts = ", ".join(f"{verdicts.count(v)} {v.value}" for v in Verdict if verdicts.count(v)) or "no gate judged"
    lines = [f"## seamgate: {counts} -> exit {exit_name}", ""]
    for run in report.baseline_red:
        red = ", ".join(f"`{c.nodeid}`" for c in run.cases if c.kind in ("failed", "error"))
        lines += [f"> **BASELINE RED** {run.label}: {red} — nothing else was judged", ""]
    if report.interrupted:
        lines += [f"> **interrupted**: not finished: {', '.join(report.unfinished) or 'none'}", ""]
    if report.outcomes:
        lines += ["| gate | arm | verdict | message |", "|---|---|---|---|"]
        lines += [f"| `{o.gate}` | {o.arm} | {_ICON[o.verdict]} {o.verdict.value} | {_cell(o.message)} |"
                  for o in report.outcomes]
    return "\n".join(lines) + "\n"


def write_markdown(path: Path, report: Report, exit_name: str) -> None:
    write_atomic(path, report_to_markdown(report, exit_name))
