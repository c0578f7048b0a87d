"""``seamgate sweep``: its options, its output, and ``--show ID`` (its settings are ``Config.sweep``: ``harness/config.py``).

Settings (all optional; the command line wins)::

    [tool.seamgate.sweep]
    paths = ["seam"]                              # what `seamgate sweep` mutates with no PATHS (default: seam)
    tests = ["tests/seam"]                        # the pytest selection (default: pytest's own testpaths)
    equivalents = "tests/equivalent_mutants.yaml" # reviewed equivalent mutants (default: none)

Output: a line per file as it finishes and, between those, at most one line every 30 s with the
mutants decided so far (a progress bar on a terminal instead), then the score, every
survivor with file, line and diff, the equivalents apart, and where the result is kept.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path
from typing import Any

from seam.arms import ARM_NAMES, DEFAULT_ARM
from harness.errors import CommandLineError
from harness.exit_codes import ExitCode
from harness.exit_mapping import code_for_sweep
from harness.results.workspace import swap_link
from reports.mutants import MutantOutcome, SweepResult
from reports.outcome import counted



def add_sweep(commands: argparse._SubParsersAction, positive_int: Any) -> None:
    """Register ``seamgate sweep`` on the CLI's subcommands."""
    parser = commands.add_parser(
        "sweep", help="mutate code with mutmut and run each mutant over the tests that reach it",
        description="Generate mutants with mutmut 3 (its names), run each over the cases that reach it through "
                    "seamgate's executor, cheapest and likeliest killers first, stopping at the first killer "
                    "(--all-killers: every killer of every mutant), and report the score and every survivor "
                    "with its diff. A re-run re-tests only mutants whose code or "
                    "reaching tests changed. See docs/sweep.md.")
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files or folders to mutate (default: [tool.seamgate.sweep] paths, else seam/)")
    parser.add_argument("--tests", action="append", default=[], metavar="PATH",
                        help="a pytest path or node id the cases come from (repeatable; default: "
                             "[tool.seamgate.sweep] tests, else pytest's own configuration)")
    parser.add_argument("--prove", action="store_true",
                        help="run every case on every mutant (default: only the cases whose baseline reach meets "
                             "the mutated function; the others are inferred from the baseline)")
    parser.add_argument("--all-killers", action="store_true",
                        help="run every reaching case of every mutant and record every killer (the full kill matrix; "
                             "default: a mutant stops at its first killing case, as in mutmut)")
    parser.add_argument("--fresh", action="store_true",
                        help="take no kept outcome or baseline (rows of .seamgate/runs) and re-test every mutant")
    parser.add_argument("--jobs", type=positive_int, default=None, metavar="N",
                        help="sessions at a time (default: [tool.seamgate] jobs)")
    parser.add_argument("--equivalents", type=Path, default=None, metavar="FILE",
                        help="reviewed equivalent mutants (default: [tool.seamgate.sweep] equivalents)")
    parser.add_argument("--fail-on-survivor", action="store_true",
                        help="exit GATE_FAILED (1) when a mutant survives that no equivalence entry explains")
    parser.add_argument("--show", metavar="ID", default=None,
                        help="print one mutant of the newest sweep (diff, status, every killer) and exit; with "
                             "--output DIR, of the sweep kept in DIR")
    parser.add_argument("--output", type=Path, default=None, metavar="DIR",
                        help="keep this sweep's logs and outcomes.json in DIR (default: .seamgate/runs/<timestamp>, "
                             "with .seamgate/runs/latest-sweep pointing at the newest)")
    parser.add_argument("--arm", choices=ARM_NAMES, default=DEFAULT_ARM,
                        help="the platform arm every run exports as SEAM_ARMS (default: cpu-emulated; cuda on a GPU "
                             "machine judges what only the cuda arm's cases reach, seam/cuda_backend.py)")
    parser.add_argument("--project", type=Path, default=argparse.SUPPRESS, metavar="DIR",
                        help="the project root (same as the global --project)")
    parser.set_defaults(handler=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> ExitCode:
    # this command's machinery, loaded when it runs: every `seamgate` command imports this module
    from harness.project import Project

    project = Project.locate(args.project)
    settings = project.config.sweep  # [tool.seamgate.sweep], read with the rest of the settings
    if args.show:
        return show(project.root, args.show, args.output)
    # this command's machinery, loaded when it runs: every `seamgate` command imports this module
    from harness.sweep.sweep import BaselineRed, Sweep, SweepOptions
    from harness.sweep.equivalents import load_equivalents

    equivalents_path = args.equivalents or (project.root / settings.equivalents if settings.equivalents else None)
    paths = tuple(args.paths) if args.paths else tuple(str(project.root / p) for p in settings.paths)
    options = SweepOptions(paths=paths, tests=tuple(args.tests) or settings.tests, prove=args.prove, fresh=args.fresh,
                           jobs=args.jobs or project.config.jobs, equivalents=load_equivalents(equivalents_path),
                           equivalents_file=str(equivalents_path or ""), progress=_progress_mode(),
                           output=args.output, arm=args.arm, all_killers=args.all_killers)
    progress = Progress(options.progress)
    sweep = Sweep(project.root, options, notify=progress.notify)
    previous = signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM ends like Ctrl-C: children killed, temp removed
    try:
        result = sweep.run()
    except BaselineRed as exc:
        progress.close()
        print(f"seamgate: BASELINE RED: {exc}", file=sys.stderr)
        return ExitCode.BASELINE_RED
    finally:
        progress.close()
        signal.signal(signal.SIGTERM, previous)
    code = code_for_sweep(result, fail_on_survivor=args.fail_on_survivor)
    keep(project.root, sweep.kept, result, code, latest=args.output is None)
    print_result(result, sweep.kept)
    if code == ExitCode.NOTHING_JUDGED:
        print("seamgate: mutmut generated no mutant in this scope: nothing was judged", file=sys.stderr)
    return code


def _interrupt(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _progress_mode() -> str:
    return "tty" if sys.stderr.isatty() else "lines"


def keep(root: Path, kept: Path | None, result: SweepResult, code: ExitCode, *, latest: bool) -> None:
    """``outcomes.json`` (a report with no gate outcomes, and the sweep under ``"sweep"``) in the kept folder."""
    import json

    # this command's machinery, loaded when it runs: every `seamgate` command imports this module
    from reports.atomic import write_atomic
    from reports.json_out import report_to_json
    from reports.mutants import sweep_to_json
    from reports.outcome import Report

    if kept is None:
        return
    data = report_to_json(Report(), int(code))
    data["sweep"] = sweep_to_json(result)
    write_atomic(kept / "outcomes.json", json.dumps(data, indent=2, default=str) + "\n")
    if latest:
        swap_link(kept, "latest-sweep")


def print_result(result: SweepResult, kept: Path | None) -> None:
    detected, scored = result.counted()
    counts = {s: len(result.of_status(s)) for s in ("killed", "timeout", "error", "survived", "no_coverage",
                                                     "equivalent", "owed")}
    shown = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items() if n)
    score = f"{result.score:.1f}%" if result.score is not None else "n/a"
    facts = result.facts
    print(f"sweep of {', '.join(result.scope)}: {counted(len(result.mutants), 'mutant')} ({shown}); "
          f"score {score} ({detected}/{scored}) in {result.wall:.1f} s; {facts.get('ran', 0)} run, "
          f"{facts.get('reused', 0)} reused from the last sweep ({result.generator})")
    if "killers" in facts:
        mode = ("every killer of every mutant (--all-killers)" if facts["killers"] == "all"
                else "each mutant stopped at its first killer (--all-killers records every one)")
        print(f"mode: {mode}; {facts.get('case_runs', 0)} case runs; time limit {facts.get('time_limit', '?')}")
    for m in result.of_status("survived", "no_coverage"):
        print(f"SURVIVED {m.file}:{m.line} {m.id} [{m.mutator or '?'}]"
              + (" (no case reaches it)" if m.status == "no_coverage" else f" ({counted(len(m.covered_by), 'case')} ran)")
              + (f": {m.reason}" if m.reason else ""))
        print(_indent(_hunks(m.diff)))
    for m in result.of_status("owed", "error"):
        print(f"{m.status.upper()} {m.file}:{m.line} {m.id}: {m.reason}")
    equivalent = result.of_status("equivalent")
    if equivalent:
        print(f"{len(equivalent)} equivalent (out of the score): " + ", ".join(m.id for m in equivalent))
    if facts.get("clean_red"):
        print(f"note: {len(facts['clean_red'])} case(s) failed on the trampolined copy with no mutant active and "
              "were not counted as killers: " + ", ".join(facts["clean_red"][:5]))
    if kept is not None:
        print(f"kept in {kept} (seamgate sweep --show ID prints one mutant)")


def _hunks(diff: str) -> str:
    return "\n".join(line for line in diff.splitlines() if line.startswith(("-", "+")) and
                     not line.startswith(("---", "+++")))


def _indent(text: str) -> str:
    return "\n".join("      " + line for line in text.splitlines())


def show(root: Path, wanted: str, folder: Path | None = None) -> ExitCode:
    """Print one mutant of the newest sweep (or of the sweep kept in ``folder``, its ``--output``): where,
    status, killers, diff."""
    # this command's machinery, loaded when it runs: every `seamgate` command imports this module
    from harness.results.workspace import runs_root
    from reports.results import ResultsError, load

    folder = folder if folder is not None else runs_root(root) / "latest-sweep"
    try:
        result = load(folder).sweep
    except ResultsError:
        result = None
    if result is None:
        raise CommandLineError(f"no kept sweep in {folder}: run `seamgate sweep` first")
    mutant = _find(result, wanted)
    print(f"{mutant.id}: {mutant.status.upper()}")
    print(f"  where:   {mutant.file}:{mutant.line}:{mutant.column}  ({mutant.mutator or 'operator unknown'})")
    if mutant.killers:
        print(f"  killers ({len(mutant.killers)}):")
        for killer in mutant.killers:
            print(f"    {killer}")
    print(f"  ran {len(mutant.covered_by)} case(s), inferred {mutant.inferred} from the baseline")
    if mutant.reason:
        print(f"  reason:  {mutant.reason}")
    sys.stdout.write(mutant.diff if mutant.diff.endswith("\n") else mutant.diff + "\n")
    return ExitCode.OK


def _find(result: SweepResult, wanted: str) -> MutantOutcome:
    exact = [m for m in result.mutants if m.id == wanted]
    if exact:
        return exact[0]
    ends = [m for m in result.mutants if m.id.endswith(wanted)]
    if len(ends) == 1:
        return ends[0]
    import difflib

    close = difflib.get_close_matches(wanted, [m.id for m in result.mutants], n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    many = f" ({len(ends)} ids end with it)" if ends else ""
    raise CommandLineError(f"--show {wanted}: no such mutant in the newest sweep{many}{hint}")


class Progress:
    """A bar on a terminal; otherwise one line per file when its last mutant is decided, and between
    those at most one line every ``every`` seconds with the mutants decided so far (a CI log)."""

    def __init__(self, mode: str, every: float = 30.0) -> None:
        self.mode, self.every = mode, every
        self.left: dict[str, int] = {}
        self.tally: dict[str, dict[str, int]] = {}
        self.bar: Any = None
        self.task: Any = None
        self.started: dict[str, float] = {}
        self.total = 0
        self.began = self.last_line = 0.0

    def notify(self, event: str, data: Any) -> None:
        if self.mode == "off":
            return
        if event == "baseline":
            print(f"sweep: baseline {data}", file=sys.stderr, flush=True)
        elif event == "planned":
            now = time.perf_counter()
            self.began = self.last_line = now
            self.total += len(data)
            for p in data:
                self.left[p.mutant.file] = self.left.get(p.mutant.file, 0) + 1
                self.started.setdefault(p.mutant.file, now)
            print(f"sweep: {counted(len(data), 'mutant')} to run ({counted(len(self.left), 'file')})", file=sys.stderr, flush=True)
            if self.mode == "tty" and data:
                from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, \
                    TimeRemainingColumn

                self.bar = Bar(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                               transient=True)
                self.bar.start()
                self.task = self.bar.add_task("sweep", total=len(data))
        elif event == "decided":
            self._decided(data, time.perf_counter())

    def _decided(self, outcomes: Any, now: float) -> None:
        printed = False
        for outcome in outcomes:
            counts = self.tally.setdefault(outcome.file, {})
            counts[outcome.status] = counts.get(outcome.status, 0) + 1
            self.left[outcome.file] = self.left.get(outcome.file, 1) - 1
            if self.bar is not None:
                self.bar.advance(self.task)
            elif self.left[outcome.file] == 0:
                took = now - self.started.get(outcome.file, now)
                shown = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
                print(f"sweep: {outcome.file}: {sum(counts.values())} run ({shown}) in {took:.1f} s",
                      file=sys.stderr, flush=True)
                printed = True
        if self.bar is None and not printed and now - self.last_line >= self.every:
            overall: dict[str, int] = {}
            for counts in self.tally.values():
                for status, n in counts.items():
                    overall[status] = overall.get(status, 0) + n
            shown = ", ".join(f"{n} {s}" for s, n in sorted(overall.items()))
            print(f"sweep: {sum(overall.values())} of {counted(self.total, 'mutant')} decided ({shown}), {now - self.began:.0f} s",
                  file=sys.stderr, flush=True)
            printed = True
        if printed:
            self.last_line = now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
