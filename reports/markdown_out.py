"""Markdown report: the short summary a CI job page or a pull-request comment shows.

One renderer for ``seamgate run --markdown FILE`` and ``seamgate report --format md``. Its order is
what a reader needs first: a verdict line with the totals and the exit code, the failures (each
message cut to ``MESSAGE_LIMIT`` characters; the whole text is in ``outcomes.json``), the OWED and
STALE ledger (OWED arms grouped by reason), a sweep's score, survivors and equivalents, and only
then every gate arm in a collapsed ``<details>`` table. Written to ``$GITHUB_STEP_SUMMARY`` it is
appended, never replacing what earlier steps wrote there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from reports.atomic import write_atomic
from reports.junit_out import xml_safe
from reports.mutants import SweepResult
from reports.outcome import ArmOutcome, Report, Verdict, counted
from reports.summary import sweep_score, verdict

_ICON = {Verdict.PASS: "✅", Verdict.FAIL: "❌", Verdict.ERROR: "💥", Verdict.TIMEOUT: "⏱️",
         Verdict.CRASH: "💥", Verdict.OWED: "🟡", Verdict.STALE: "🟡"}
#: Characters of a failure's message shown in the failures list.
MESSAGE_LIMIT = 400
#: Characters of a message shown in a table cell (the full text is in ``outcomes.json``).
CELL_LIMIT = 80
#: Failures listed before the rest are folded into a ``<details>`` block.
FAILURES_SHOWN = 10
#: Gate ids named inline for one OWED reason before "and N more".
NAMES_LIMIT = 6
_FAILED = (Verdict.FAIL, Verdict.ERROR, Verdict.TIMEOUT, Verdict.CRASH)
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def _cut(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters, safe to put in Markdown (see ``_plain``)."""
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
    return _plain(text)


def _plain(text: str) -> str:
    """Control characters as ``#xNN`` (pytest's ANSI colours), ``<`` and ``>`` as entities: GitHub would
    take ``<joi>`` in a message for an HTML tag and swallow it."""
    return xml_safe(text).replace("<", "&lt;").replace(">", "&gt;")


def _cell(text: str, limit: int = CELL_LIMIT) -> str:
    return _cut(text, limit).replace("|", "\\|")


def _details(summary: str, body: list[str]) -> list[str]:
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>", ""]


def verdict_line(report: Report, exit_name: str, sweep: SweepResult | None = None) -> str:
    return f"## {verdict(report, exit_name, sweep)}"


def _failures(outcomes: Iterable[ArmOutcome]) -> list[str]:
    failed = [o for o in outcomes if o.verdict in _FAILED]
    if not failed:
        return []
    items = [f"- {_ICON[o.verdict]} **{o.verdict.value}** `{o.gate}` [{o.arm}]: {_cut(o.message, MESSAGE_LIMIT)}"
             for o in failed]
    lines = [f"### Failures ({len(failed)})", "", *items[:FAILURES_SHOWN], ""]
    if len(items) > FAILURES_SHOWN:
        lines += _details(f"{len(items) - FAILURES_SHOWN} more failures", items[FAILURES_SHOWN:])
    return lines


def _ledger(outcomes: Iterable[ArmOutcome]) -> list[str]:
    """OWED arms grouped by reason (they share few reasons), STALE arms one by one."""
    owed = [o for o in outcomes if o.verdict is Verdict.OWED]
    stale = [o for o in outcomes if o.verdict is Verdict.STALE]
    if not owed and not stale:
        return []
    lines = [f"### Owed ({len(owed)} OWED, {len(stale)} STALE)", ""]
    reasons: dict[str, list[ArmOutcome]] = {}
    for o in owed:
        reasons.setdefault(o.message.removeprefix("OWED:").strip(), []).append(o)
    for reason, arms in reasons.items():
        names = [f"`{o.gate}` [{o.arm}]" for o in arms[:NAMES_LIMIT]]
        more = f" and {len(arms) - NAMES_LIMIT} more" if len(arms) > NAMES_LIMIT else ""
        lines.append(f"- 🟡 **OWED** ×{len(arms)}: {_cut(reason, MESSAGE_LIMIT)} — {', '.join(names)}{more}")
    if stale:
        rows = ["| gate | arm | why |", "|---|---|---|"]
        rows += [f"| `{o.gate}` | {o.arm} | {_cell(o.message.removeprefix('STALE:').strip())} |" for o in stale]
        lines += ["", *_details(f"🟡 {len(stale)} STALE: measured on code that has changed since", rows)]
    return lines + [""]


def _sweep(sweep: SweepResult) -> list[str]:
    survivors = sweep.of_status("survived", "no_coverage")
    equivalent = sweep.of_status("equivalent")
    owed = sweep.of_status("owed")
    lines = [f"### Sweep of {', '.join(sweep.scope) or 'the project'}: {sweep_score(sweep)}", "",
             f"{counted(len(sweep.mutants), 'mutant')} on {sweep.arm}, {len(equivalent)} equivalent, "
             f"{len(owed)} owed, {sweep.wall:.1f} s", ""]
    if survivors:
        lines += [f"- `{m.file}:{m.line}` {m.status} {m.mutator} `{m.id}`" for m in survivors] + [""]
        diffs = []
        for m in survivors:
            diffs += [f"`{m.id}`", "", "```diff", xml_safe(m.diff.rstrip()), "```", ""]
        lines += _details(f"diffs of the {counted(len(survivors), 'survivor')}", diffs)
    if equivalent:
        lines += ["Equivalent (out of the score): " + "; ".join(f"`{m.id}` ({_cut(m.reason, CELL_LIMIT)})"
                                                               for m in equivalent), ""]
    return lines


def report_to_markdown(report: Report, exit_name: str, sweep: SweepResult | None = None) -> str:
    """The verdict line, baseline and interruption warnings, failures, the ledger, the sweep, all arms."""
    lines = [verdict_line(report, exit_name, sweep), ""]
    for run in report.baseline_red:
        red = ", ".join(f"`{c.nodeid}`" for c in run.cases if c.kind in ("failed", "error"))
        why = red or f"{run.end}: {run.detail or 'no detail'}"  # a baseline that timed out or crashed
        lines += [f"> **BASELINE RED** {run.label}: {why} — nothing else was judged", ""]
    if report.interrupted:
        lines += [f"> **interrupted**: not finished: {', '.join(report.unfinished) or 'none'}", ""]
    lines += _failures(report.outcomes)
    lines += _ledger(report.outcomes)
    if sweep is not None:
        lines += _sweep(sweep)
    if report.outcomes:
        table = ["| gate | arm | verdict | message |", "|---|---|---|---|"]
        table += [f"| `{o.gate}` | {o.arm} | {_ICON[o.verdict]} {o.verdict.value} | {_cell(o.message)} |"
                  for o in report.outcomes]
        lines += _details(f"All {len(report.outcomes)} gate arms", table)
    return "\n".join(lines).rstrip() + "\n"


def write_markdown(path: Path, report: Report, exit_name: str, sweep: SweepResult | None = None) -> None:
    """Write the summary to ``path``; append instead when ``path`` is ``$GITHUB_STEP_SUMMARY``."""
    text = report_to_markdown(report, exit_name, sweep)
    if is_step_summary(path):
        append(path, text)
    else:
        write_atomic(path, text)


def is_step_summary(path: Path) -> bool:
    summary = os.environ.get(STEP_SUMMARY)
    return bool(summary) and Path(summary).resolve() == path.resolve()


def append(path: Path, text: str) -> None:
    """Append ``text`` (after a blank line when the file has content): a job summary is shared by steps."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        if fh.tell() > 0:
            fh.write("\n")
        fh.write(text)
