"""Runs side by side with every core each vs with their share: what ``Executor(threads=...)`` saves.

``seamgate run --jobs N`` runs N pytest sessions at once. Left at its default, each session's
OpenMP pool (torch's intra-op threads) takes every core, so N sessions spin against each other.
This runs the same ``--jobs`` sessions both ways, interleaved over ``--rounds``, in one invocation on
one machine, and prints the wall time and the CPU time of each way, and their ratio.

    .venv/bin/python bench/bench_threads.py [--jobs 2] [--rounds 3] [PYTEST_PATHS...]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PATHS = ["tests/drivers/test_dense_exact.py", "tests/drivers/test_moe_exact.py", "tests/drivers/test_aux_exact.py"]


def side_by_side(jobs: int, paths: list[str], threads: int | None) -> tuple[float, float]:
    """(wall, CPU seconds of the children) of ``jobs`` pytest sessions over ``paths`` started together."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    if threads is not None:
        env.update({var: str(threads) for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(jobs)]
    codes = [p.wait() for p in procs]
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if any(codes):
        raise SystemExit(f"a pytest session failed ({codes}); run it alone to see why")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="sessions side by side (seamgate run --jobs)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are printed")
    parser.add_argument("paths", nargs="*", default=DEFAULT_PATHS, help="pytest paths each session runs")
    args = parser.parse_args(argv)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    share = max(1, cores // args.jobs)
    every, shared = [], []
    for _ in range(args.rounds):
        every.append(side_by_side(args.jobs, args.paths, None))
        shared.append(side_by_side(args.jobs, args.paths, share))
    w0, c0 = statistics.median(w for w, _ in every), statistics.median(c for _, c in every)
    w1, c1 = statistics.median(w for w, _ in shared), statistics.median(c for _, c in shared)
    print(f"{args.jobs} sessions side by side on {cores} cores, {args.rounds} rounds (medians), {len(args.paths)} test files each")
    print(f"| threads per session | wall | CPU |\n|---|---|---|\n| every core (default) | {w0:.1f} s | {c0:.1f} s |")
    print(f"| share: {share} | {w1:.1f} s | {c1:.1f} s |")
    print(f"share / default: wall {w1 / w0:.2f}, CPU {c1 / c0:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
