"""Benchmark: wall time of `seamgate run` (reach-inferred) against `seamgate run --prove`, same verdicts.

Runs the bundled gate suite twice in one invocation, each as its own `seamgate` process (the real
command: fork server start, baselines, every row), prints both wall times side by side and checks
that every (gate, arm) got the same verdict in both modes. Exit status 1 when they differ.

    .venv/bin/python bench/bench_suite.py [--out DIR] [--reuse] [-- EXTRA seamgate run ARGS]

Both runs are COLD by default: each is given `--no-reuse`, so no cell is carried from a kept run
and every row runs (a warm run reuses what the last run kept and measures the reuse, not the
suite). `--reuse` measures warm runs instead. The first line printed says which was measured.

A benchmark, not a timed test: the figures depend on the machine and its load (run `uptime` beside
it). The targets (issue 10): default under 2 minutes, `--prove` under 6, on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(mode: str, out: Path, extra: list[str]) -> tuple[float, dict, int]:
    """One `seamgate run` in ``mode`` ("default" or "prove"): (wall seconds, JSON report, exit code)."""
    report = out / f"{mode}.json"
    argv = [str(ROOT / ".venv/bin/seamgate"), "run", "--json", str(report), "--output", str(out / f"{mode}-kept"),
            *(["--prove"] if mode == "prove" else []), *extra]
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - started
    (out / f"{mode}.log").write_text(proc.stdout)
    return wall, json.loads(report.read_text()), proc.returncode


def verdicts(report: dict) -> dict[tuple[str, str], str]:
    return {(o["gate"], o["arm"]): o["verdict"] for o in report["outcomes"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("/tmp/seamgate-bench-suite"), help="reports and logs here")
    parser.add_argument("--reuse", action="store_true", help="measure warm runs: leave out --no-reuse, so each "
                        "run carries cells from the runs kept before")
    parser.add_argument("extra", nargs="*", help="more `seamgate run` arguments (after --)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    cold = not args.reuse
    extra = [*args.extra, *(["--no-reuse"] if cold and "--no-reuse" not in args.extra else [])]
    print("measured: cold (both runs with --no-reuse: every row runs, nothing carried from a kept run)" if cold
          else "measured: warm (--reuse: each run carries cells from the runs kept before)", flush=True)
    results = {mode: run(mode, args.out, extra) for mode in ("default", "prove")}
    (fast_wall, fast, fast_code), (slow_wall, slow, slow_code) = results["default"], results["prove"]
    inferred = sum(r.get("inferred", 0) for o in fast["outcomes"] for r in o["runs"])
    differ = {k: (v, verdicts(slow).get(k)) for k, v in verdicts(fast).items() if verdicts(slow).get(k) != v}
    differ.update({k: (None, v) for k, v in verdicts(slow).items() if k not in verdicts(fast)})
    print(f"machine: {os.cpu_count()} cores, load average at start {load:.2f}")
    print("| mode | wall | exit | gate arms | verdicts |")
    print("|---|---|---|---|---|")
    for mode, (wall, report, code) in results.items():
        counts: dict[str, int] = {}
        for v in verdicts(report).values():
            counts[v] = counts.get(v, 0) + 1
        text = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        print(f"| `seamgate run{' --prove' if mode == 'prove' else ''}` | {wall:.1f} s | {code} | "
              f"{len(report['outcomes'])} | {text} |")
    print(f"speed-up {slow_wall / fast_wall:.2f}x; cells inferred in the default run (summed over gate arms): {inferred}")
    if differ or fast_code != slow_code:
        print(f"VERDICTS DIFFER (exit {fast_code} vs {slow_code}): {differ}")
        return 1
    print(f"verdicts identical: {len(verdicts(fast))} gate arms, exit {fast_code} in both modes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
