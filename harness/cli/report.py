"""``seamgate report``: render kept results (gate runs, sweeps, merged shards) in every report format.

``harness.cli.main`` registers it with ``add_report(commands)``; this module owns the arguments and the
handler. Reading, merging and rendering live in ``reports`` (``results``, ``merge``, ``render``);
here they become exit codes: a RESULTS path that is not a kept result is a ``USAGE_ERROR`` naming
the path and the fix, an incomplete set of shards is ``MERGE_FAILED`` naming each part.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from harness.errors import CommandLineError
from harness.exit_codes import ExitCode
from harness.exit_mapping import code_for_report
from reports.merge import MergeError, merge
from reports.render import FORMATS, formats_help, render, text
from reports.results import KeptResult, ResultsError, load

DEFAULT_RESULTS = Path(".seamgate/runs/latest")


def add_report(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "report", help=f"render kept results: {', '.join(FORMATS)}; --merge joins shards",
        description="Render kept results of `seamgate run` or `seamgate sweep` (a .seamgate/runs/<timestamp> folder "
                    "or its outcomes.json) in one format, to stdout or --out FILE. With --merge, join the parts of "
                    "a `seamgate run --shard K/N` run into one report; a missing, duplicated or mismatched shard "
                    "is named and the merge fails (exit MERGE_FAILED). docs/reports.md describes each format.")
    parser.add_argument("results", nargs="*", type=Path, metavar="RESULTS",
                        help=f"kept run folders or their outcomes.json (default: {DEFAULT_RESULTS})")
    parser.add_argument("--format", choices=FORMATS, default="text", dest="fmt",
                        help=formats_help())
    parser.add_argument("--merge", action="store_true",
                        help="join the parts of one `seamgate run --shard K/N` run (every K exactly once)")
    parser.add_argument("--out", type=Path, default=None, metavar="FILE", help="write here instead of stdout")
    parser.add_argument("--check", action="store_true",
                        help="exit with the results' own exit code (for a merge: the merged run's) instead of OK")
    parser.add_argument("--project", type=Path, default=argparse.SUPPRESS, metavar="DIR",
                        help="where mte reads the mutated files' source (default: the project the results are kept in)")
    parser.set_defaults(handler=cmd_report)


def cmd_report(args: argparse.Namespace) -> ExitCode:
    # this command's machinery, loaded when it runs: every `seamgate` command imports this module
    from harness.cli.outputs import check_outputs

    check_outputs([("--out", args.out)])  # a folder, a read-only place: refused before anything is read
    paths = list(args.results) or [DEFAULT_RESULTS]
    if len(paths) > 1 and not args.merge:
        raise CommandLineError(f"{len(paths)} results given: seamgate report renders one result; "
                               "to join the parts of a `seamgate run --shard K/N` run, add --merge")
    try:
        parts = [load(path) for path in paths]
        if args.merge:
            kept = merge(parts)
            code = merged_exit_code(kept, parts)
        else:
            kept = parts[0]
            code = _known_code(kept.exit_code)
        output = render(kept, args.fmt, code.name, project_root=_project_root(args, kept))
    except MergeError as exc:
        print(f"seamgate: error: {exc}", file=sys.stderr)
        return ExitCode.MERGE_FAILED
    except ResultsError as exc:
        raise CommandLineError(str(exc)) from None
    _deliver(args, kept, code, output)
    return code if args.check else ExitCode.OK


def merged_exit_code(kept: KeptResult, parts: list[KeptResult]) -> ExitCode:
    """The exit code the whole run would have had (``code_for_report`` over the merged report)."""
    return code_for_report(kept.report, fail_on_owed=any(p.exit_code == ExitCode.OWED for p in parts))


def _known_code(value: int) -> ExitCode:
    try:
        return ExitCode(value)
    except ValueError:
        return ExitCode.INTERNAL


def _project_root(args: argparse.Namespace, kept: KeptResult) -> Path:
    """``--project``, else the project whose ``.seamgate/runs`` keeps the result, else the current folder."""
    given = getattr(args, "project", None)
    if given is not None:
        return Path(given)
    folder = kept.folder.resolve()
    if folder.parent.name == "runs" and folder.parent.parent.name == ".seamgate":
        return folder.parent.parent.parent
    return Path.cwd()


def _deliver(args: argparse.Namespace, kept: KeptResult, code: ExitCode, output: str) -> None:
    """Write to ``--out`` (atomically) or stdout; md is also appended to ``$GITHUB_STEP_SUMMARY`` when set."""
    # this command's machinery, loaded when it runs: every `seamgate` command imports this module
    from reports.atomic import write_atomic
    from reports.markdown_out import STEP_SUMMARY, append, is_step_summary

    summary = os.environ.get(STEP_SUMMARY)
    if args.out is not None:
        if args.fmt == "md" and is_step_summary(args.out):
            append(args.out, output)
            return
        write_atomic(args.out, output)
    elif args.fmt == "text" and sys.stdout.isatty():
        from rich.console import Console

        text(kept, code.name, Console())
    else:
        sys.stdout.write(output)
    if args.fmt == "md" and summary:
        append(Path(summary), output)
