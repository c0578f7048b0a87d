"""Terminal report (rich): a progress bar on stderr while runs go, a results table at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence, TextIO

from rich.console import Console
from rich.progress import (
    BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn,
)
from rich.table import Table

from reports.outcome import ArmOutcome, Report, Verdict

_STYLE = {
    Verdict.PASS: "green", Verdict.FAIL: "bold red", Verdict.ERROR: "bold magenta",
    Verdict.TIMEOUT: "magenta", Verdict.CRASH: "magenta", Verdict.OWED: "yellow", Verdict.STALE: "yellow",
}


class GateProgress:
    """Progress for people and for CI logs.

    On a terminal: a bar on stderr naming what runs now, gates done/total, elapsed and ETA. Elsewhere
    (a CI log): one line per finished gate arm, ``[12/66] PASS g2-isolation-dense [cpu-emulated] 41 s``.
    ``mode`` ``"off"`` prints nothing.
    """

    def __init__(self, total: int, mode: str, stream: TextIO | None = None) -> None:
        import sys
        import threading
        import time

        self.total, self.mode, self.done = total, mode, 0
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.running: dict[str, None] = {}
        self.lock = threading.Lock()
        self.bar: Progress | None = None
        if mode == "tty":
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                console=Console(file=self.stream), transient=True)
            self.task = self.bar.add_task("starting", total=total)

    def __enter__(self) -> GateProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def start(self, label: str) -> None:
        with self.lock:
            self.running[label] = None
            self._describe()

    def stop(self, label: str) -> None:
        with self.lock:
            self.running.pop(label, None)
            self._describe()

    def finished(self, gate: str, arm: str, verdict: str) -> None:
        import time

        with self.lock:
            self.done += 1
            if self.bar is not None:
                self.bar.advance(self.task)
            elif self.mode == "lines":
                elapsed = time.monotonic() - self.started
                print(f"[{self.done}/{self.total}] {verdict} {gate} [{arm}] {elapsed:.0f} s", file=self.stream,
                      flush=True)

    def _describe(self) -> None:
        if self.bar is not None:
            now = ", ".join(list(self.running)[:2]) or "judging"
            self.bar.update(self.task, description=now[:60])


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
        table.add_row(o.gate, o.arm, f"[{_STYLE[o.verdict]}]{o.verdict.value}[/]{_from_evidence(o)}")
    return table


def _from_evidence(outcome: ArmOutcome) -> str:
    """`` (evidence <commit>)`` for a verdict taken from a stored record, not measured by this run."""
    record = outcome.facts.get("evidence")
    if not isinstance(record, dict):
        return ""
    return f" (evidence {str(record.get('commit') or 'unknown')[:10]})"


def message_lines(report: Report) -> list[str]:
    """``gate [arm] VERDICT: message``, one line each: greppable, never folded mid-word."""
    return [f"{o.gate} [{o.arm}] {o.verdict.value}: {o.message.removeprefix(o.verdict.value + ': ')}"
            for o in report.outcomes]


def print_report(report: Report, console: Console, exit_name: str, kept: Path | None = None) -> None:
    """The baseline trouble (if any), the table, where the results are kept, and a one-line total
    with the exit code (always the last line: CI greps it)."""
    for run in report.baseline_red:
        red = [f"{c.nodeid or '(session)'} ({c.kind}{': ' + c.message if c.kind == 'error' and c.message else ''})"
               for c in run.cases if c.kind in ("failed", "error")]
        why = ", ".join(red) or f"{run.end}: {run.detail or 'no detail'}"
        console.print(f"[bold red]BASELINE RED[/] {run.label}: ", end="")
        console.print(f"{why} — nothing else was judged", markup=False, soft_wrap=True, highlight=False)
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
