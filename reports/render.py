"""One entry point for every report format: a kept result rendered as text, md, json, junit, mte or html."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Literal

from rich.console import Console

from reports.html_out import render_html
from reports.json_out import report_to_json
from reports.junit_out import junit_text
from reports.markdown_out import report_to_markdown
from reports.mte_out import source_reader, sweep_to_mte
from reports.mutants import SweepResult
from reports.results import KeptResult, ResultsError
from reports.summary import sweep_score, verdict
from reports.terminal import print_report

Format = Literal["text", "md", "json", "junit", "mte", "html"]
FORMATS: tuple[str, ...] = ("text", "md", "json", "junit", "mte", "html")


def render(kept: KeptResult, fmt: str, exit_name: str, *, project_root: Path | None = None) -> str:
    """``kept`` in format ``fmt``; ``project_root`` is where ``mte`` reads the mutated files' source."""
    if fmt == "text":
        return text(kept, exit_name)
    if fmt == "md":
        return report_to_markdown(kept.report, exit_name, kept.sweep)
    if fmt == "json":
        data = report_to_json(kept.report, kept.exit_code, shard=kept.shard, plan=kept.plan, sweep=kept.sweep)
        return json.dumps(data, indent=2, default=str) + "\n"
    if fmt == "junit":
        return junit_text(kept.report, kept.sweep)
    if fmt == "mte":
        if kept.sweep is None:
            raise ResultsError(f"{kept.source}: holds no sweep, and the mte format shows mutants; "
                               "render a `seamgate sweep` result, or choose --format md|html|junit for gates")
        root = project_root or Path.cwd()
        return json.dumps(sweep_to_mte(kept.sweep, source_reader(root)), indent=2) + "\n"
    if fmt == "html":
        return render_html(kept.report, exit_name, kept.sweep, title=f"seamgate report: {kept.folder.name}")
    raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")


def text(kept: KeptResult, exit_name: str, console: Console | None = None) -> str:
    """The terminal report (``reports.terminal``), plus a sweep's score and survivors; returns what it wrote
    (empty when ``console`` is given: it printed there, in colour where that is a terminal)."""
    buffer = io.StringIO()
    out = console or Console(file=buffer, width=120, no_color=True, highlight=False)
    if kept.sweep is not None:
        for line in sweep_lines(kept.sweep):
            out.print(line, markup=False, soft_wrap=True, highlight=False)
    if kept.report.outcomes or kept.report.baseline_red or kept.sweep is None:
        print_report(kept.report, out, exit_name, kept=kept.folder)
    else:  # a sweep's own result: no gate table, the same last line CI greps
        out.print(f"results kept in {kept.folder}", markup=False, soft_wrap=True, highlight=False)
        out.print(verdict(kept.report, exit_name, kept.sweep).removeprefix("seamgate: "), markup=False,
                  soft_wrap=True, highlight=False)
    return buffer.getvalue()


def sweep_lines(sweep: SweepResult) -> list[str]:
    lines = [f"sweep of {', '.join(sweep.scope)} on {sweep.arm}: {sweep_score(sweep)}, {len(sweep.mutants)} mutants, "
             f"{sweep.wall:.1f} s"]
    lines += [f"  {m.status.upper()} {m.file}:{m.line} {m.mutator} {m.id}" for m in sweep.of_status("survived", "no_coverage")]
    lines += [f"  EQUIVALENT {m.file}:{m.line} {m.id}: {m.reason}" for m in sweep.of_status("equivalent")]
    return lines
