"""Report formats: one registry, one renderer entry per format (text, md, json, junit, mte, html)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from dataclasses import dataclass
from typing import Callable, Literal, Mapping

from rich.console import Console

from reports.html_out import render_html
from reports.json_out import report_to_json
from reports.junit_out import junit_text
from reports.markdown_out import report_to_markdown
from reports.mte_out import source_reader, sweep_to_mte
from reports.mutants import SweepResult
from reports.outcome import counted
from reports.results import KeptResult, ResultsError
from reports.summary import sweep_score, verdict
from reports.terminal import print_report

Format = Literal["text", "md", "json", "junit", "mte", "html"]


@dataclass(frozen=True)
class ReportFormat:
    """One report format: its name, its renderer, and how the command line offers it."""

    #: The name of ``seamgate report --format NAME`` and ``seamgate run --report NAME=PATH``.
    name: Format
    #: ``(kept, exit_name, project_root) -> text``: the result model in, the report out.
    render: Callable[[KeptResult, str, Path], str]
    #: What it is, in the words of ``--format``'s help.
    help: str
    #: The suffix of a file of this format (an example path in a message).
    suffix: str
    #: The flag of ``seamgate run`` that has written it since before ``--report`` (``None``: none);
    #: ``(flag, help)``.
    run_flag: tuple[str, str] | None = None


def _json(kept: KeptResult, exit_name: str, project_root: Path) -> str:
    data = report_to_json(kept.report, kept.exit_code, shard=kept.shard, plan=kept.plan, sweep=kept.sweep)
    return json.dumps(data, indent=2, default=str) + "\n"


def _mte(kept: KeptResult, exit_name: str, project_root: Path) -> str:
    if kept.sweep is None:
        raise ResultsError(f"{kept.source}: holds no sweep, and the mte format shows mutants; "
                           "render a `seamgate sweep` result, or choose --format md|html|junit for gates")
    return json.dumps(sweep_to_mte(kept.sweep, source_reader(project_root)), indent=2) + "\n"


#: A run folder's name as ``harness/results/workspace.py`` makes it: ``<UTC timestamp>-<pid>[-n]``.
_RUN_STAMP = re.compile(r"(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z-\d+(-\d+)?")


def html_title(kept: KeptResult, project_root: Path) -> str:
    """``"seamgate report: shop, run of 2026-12-03 10:15:30 UTC"``: the project and the run itself.

    The folder is read through the ``latest`` link, whose name says nothing about which run it was
    when the page is opened later; a folder not named by a run's stamp (``--output DIR``) is named as is.
    """
    folder = kept.folder.resolve().name
    stamp = _RUN_STAMP.fullmatch(folder)
    run = f"run of {'-'.join(stamp.groups()[:3])} {':'.join(stamp.groups()[3:6])} UTC" if stamp else f"run {folder}"
    return f"seamgate report: {project_root.resolve().name}, {run}"


#: Every report format: one entry each. ``FORMATS``, ``render``, the choices and help of ``seamgate report
#: --format`` and of ``seamgate run --report``, and ``run``'s ``--json``/``--junit``/``--markdown`` follow it.
REPORT_FORMATS: tuple[ReportFormat, ...] = (
    ReportFormat("text", lambda kept, exit_name, root: text(kept, exit_name), "text (terminal table)", ".txt"),
    ReportFormat("md", lambda kept, exit_name, root: report_to_markdown(kept.report, exit_name, kept.sweep),
                 "md (CI job summary; appended to $GITHUB_STEP_SUMMARY when set)", ".md",
                 run_flag=("--markdown", "write a Markdown summary here (e.g. $GITHUB_STEP_SUMMARY)")),
    ReportFormat("json", _json, "json (the result model, harness/results/result_schema.json)", ".json",
                 run_flag=("--json", "write the JSON report here")),
    ReportFormat("junit", lambda kept, exit_name, root: junit_text(kept.report, kept.sweep), "junit (JUnit XML)",
                 ".xml", run_flag=("--junit", "write JUnit XML here")),
    ReportFormat("mte", _mte, "mte (mutation-testing-elements report of a sweep)", ".json"),
    ReportFormat("html", lambda kept, exit_name, root: render_html(kept.report, exit_name, kept.sweep,
                                                                   title=html_title(kept, root)),
                 "html (one self-contained page)", ".html"),
)
#: Each format by its name.
BY_NAME: Mapping[str, ReportFormat] = {f.name: f for f in REPORT_FORMATS}
FORMATS: tuple[str, ...] = tuple(BY_NAME)


def render(kept: KeptResult, fmt: str, exit_name: str, *, project_root: Path | None = None) -> str:
    """``kept`` in format ``fmt``; ``project_root`` is where ``mte`` reads the mutated files' source."""
    if fmt not in BY_NAME:
        raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    return BY_NAME[fmt].render(kept, exit_name, project_root or Path.cwd())


def formats_help() -> str:
    """The formats in words, for ``--format``'s help: ``text (terminal table), md (...), ...``."""
    return ", ".join(f.help for f in REPORT_FORMATS)


def parse_report_option(value: str) -> tuple[str, Path]:
    """``FMT=PATH`` of ``seamgate run --report``; a ``ValueError`` names the known formats."""
    fmt, sep, path = value.partition("=")
    if not sep or not path:
        raise ValueError(f"--report {value!r}: write FMT=PATH, e.g. --report html=report.html "
                         f"(formats: {', '.join(FORMATS)})")
    if fmt not in BY_NAME:
        raise ValueError(f"--report {value!r}: unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    return fmt, Path(path)


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
    lines = [f"sweep of {', '.join(sweep.scope)} on {sweep.arm}: {sweep_score(sweep)}, {counted(len(sweep.mutants), 'mutant')}, "
             f"{sweep.wall:.1f} s"]
    lines += [f"  {m.status.upper()} {m.file}:{m.line} {m.mutator} {m.id}" for m in sweep.of_status("survived", "no_coverage")]
    lines += [f"  EQUIVALENT {m.file}:{m.line} {m.id}: {m.reason}" for m in sweep.of_status("equivalent")]
    return lines
