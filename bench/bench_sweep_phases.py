"""Where a sweep's time goes on a real project: each run's start and end, and (``--all-killers``) what the
cut cases cost. The figures of docs/runner.md (the fork server without torch) and of docs/benchmarks.md
(issue 26, session 12: the phases of cachetools' sweep, its cut cases) come from this script.

    .venv/bin/python bench/bench_sweep_phases.py                      # cachetools' _cached.py, default mode
    .venv/bin/python bench/bench_sweep_phases.py --all-killers        # the full kill matrix, its cut cases
    .venv/bin/python bench/bench_sweep_phases.py --project dateutil --rounds 3

The project's pinned sdist is downloaded with pip into a temp folder (``bench_sweep.REAL``; nothing of it
is kept). Each round runs ``Sweep.run`` from nothing (``fresh``), ``--jobs 2``, in this process, and prints
one line per event: seconds since the round began, then what happened (the baseline, mutmut's generation,
the fork server ready, each pytest session of the sweep ended, with its own wall time).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import bench_sweep  # noqa: E402
from harness.rows import forkserver  # noqa: E402
from harness.sweep.sweep import Sweep, SweepOptions  # noqa: E402
from reports.mutants import SweepResult  # noqa: E402


def timed_round(root: Path, file: str, tests: list[str], all_killers: bool) -> float:
    """One sweep of ``file`` from nothing, its events printed as they happen; its wall seconds."""
    started = time.perf_counter()

    def say(what: str) -> None:
        print(f"{time.perf_counter() - started:7.2f}  {what}", flush=True)

    original_start, original_execute = forkserver.ForkServer.start, Sweep._execute

    def start(self: forkserver.ForkServer, *args: object, **kwargs: object) -> forkserver.ForkServer:
        began = time.perf_counter()
        server = original_start(self, *args, **kwargs)
        say(f"fork server ready ({time.perf_counter() - began:.2f} s; preloads {' '.join(self.preload)})")
        return server

    def execute(self: Sweep, **fields: object) -> object:
        began = time.perf_counter()
        run = original_execute(self, **fields)
        say(f"ran {fields.get('label')} ({time.perf_counter() - began:.2f} s)")
        return run

    def notify(event: str, data: object) -> None:
        if event in ("baseline", "generated"):
            say(f"{event} {data}")

    forkserver.ForkServer.start, Sweep._execute = start, execute  # type: ignore[method-assign]
    try:
        result = Sweep(root, SweepOptions(paths=(file,), tests=tuple(tests), jobs=2, progress="off", fresh=True,
                                          all_killers=all_killers), notify=notify).run()
    finally:
        forkserver.ForkServer.start, Sweep._execute = original_start, original_execute  # type: ignore[method-assign]
    wall = time.perf_counter() - started
    counts: dict[str, int] = {}
    for mutant in result.mutants:
        counts[mutant.status] = counts.get(mutant.status, 0) + 1
    say(f"done: {len(result.mutants)} mutants {counts}, {sum(len(m.killers) for m in result.mutants)} killers")
    if all_killers:
        print_cuts(result)
    return wall


def print_cuts(result: SweepResult) -> None:
    """The cut cases (``--all-killers``): how many, in how many mutants, against the mutants' own wall time
    (summed over both jobs); each cut case took about its limit (the rule printed)."""
    cut, cut_in = 0, 0
    for mutant in result.mutants:
        found = re.search(r"were cut there \(.*?\): (.*)$", mutant.reason)
        if found:
            cut, cut_in = cut + len(found.group(1).split(", ")), cut_in + 1
    print(f"         cut cases: {cut} in {cut_in} mutants; mutant wall {sum(m.wall for m in result.mutants):.1f} s "
          f"over both jobs; rule: {result.facts.get('case_limit', '')}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--project", choices=sorted(bench_sweep.REAL), default="cachetools",
                        help="which of issue 26's real projects")
    parser.add_argument("--all-killers", action="store_true", help="the full kill matrix, and its cut cases")
    parser.add_argument("--rounds", type=int, default=1, help="sweeps one after another, each from nothing")
    args = parser.parse_args(argv)
    _, _, file, tests, _ = bench_sweep.REAL[args.project]
    scratch = Path(tempfile.mkdtemp(prefix="seamgate-bench-phases-"))
    try:
        root = scratch / "project"
        shutil.copytree(bench_sweep.real_project(args.project, scratch), root)
        with open(root / "pyproject.toml", "a", encoding="utf-8") as pyproject:
            pyproject.write("\n[tool.seamgate]\n")
        os.chdir(root)  # the sweep reads its paths and tests as the command line does: from the project
        walls = [timed_round(root, file, tests, args.all_killers) for _ in range(args.rounds)]
        print(f"{args.project} {file}: {', '.join(f'{w:.1f} s' for w in walls)}")
        return 0
    finally:
        os.chdir(ROOT)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
