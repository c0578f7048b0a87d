"""Terminal report (rich): a progress bar on stderr while runs go, a results table at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from reports.outcome import Report, Verdict

_STYLE = {
    Verdict.PASS: "green", Verdict.FAIL: "bold red", Verdict.ERROR: "bold magenta",
    Verdict.TIMEOUT: "magenta", Verdict.CRASH: "magenta", Verdict.OWED: "yellow", Verdict.STALE: "yellow",
}


def progress(total: int, *, enabled: bool) -> Progress:
    """A progress bar on stderr; ``enabled=False`` (not a TTY) renders nothing."""
    console = Console(stderr=True)
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, disable=not enabled, transient=True)


def results_table(report: Report) -> Table:
    """Gate, arm and verdict: narrow enough for an 80-column CI log (messages follow, one per line)."""
    table = Table(title="seamgate results", show_lines=False)
    for column in ("gate", "arm", "verdict"):
        table.add_column(column, no_wrap=True)
    for o in report.outcomes:
        table.add_row(o.gate, o.arm, f"[{_STYLE[o.verdict]}]{o.verdict.value}[/]")
    return table


def message_lines(report: Report) -> list[str]:
    """``gate [arm] VERDICT: message``, one line each: greppable, never folded mid-word."""
    return [f"{o.gate} [{o.arm}] {o.verdict.value}: {o.message.removeprefix(o.verdict.value + ': ')}"
            for o in report.outcomes]


def print_report(report: Report, console: Console, exit_name: str, kept: Path | None = None) -> None:
    """The baseline trouble (if any), the table, where the results are kept, and a one-line total
    with the exit code (always the last line: CI greps it)."""
    for run in report.baseline_red:
        red = [f"{c.nodeid} ({c.kind})" for c in run.cases if c.kind in ("failed", "error")]
        console.print(f"[bold red]BASELINE RED[/] {run.label}: {', '.join(red)} — nothing else was judged")
    if report.outcomes:
        console.print(results_table(report))
        for line in message_lines(report):
            console.print(line, markup=False, soft_wrap=True, highlight=False)
    if report.interrupted:
        console.print(f"[yellow]interrupted[/]: not finished: {', '.join(report.unfinished) or 'none'}")
    if kept is not None:
        console.print(f"results kept in {kept}", markup=False, soft_wrap=True, highlight=False)
    console.print(totals(report.verdicts()) + f" -> exit {exit_name}")


def totals(verdicts: Sequence[Verdict]) -> str:
    counts = {v: verdicts.count(v) for v in Verdict if verdicts.count(v)}
    return ", ".join(f"{n} {v.value}" for v, n in counts.items()) or "no gate judged"
