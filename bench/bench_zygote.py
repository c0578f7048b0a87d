"""Benchmark: a test's fresh-interpreter child forked from a zygote against a real interpreter.

The same probe (import the seam, capture one scope on the emulator, print a line) runs N times as
``python -c`` through ``harness.zygote.run_python``: once with a zygote forked from this process
after ``import torch`` and ``torch._dynamo`` and ``gc.freeze()`` (as the run child of a seamgate run has
them, from the fork server), once with
none (every child a real interpreter). Prints the median wall per child of each and the ratio, and
what ``import torch._dynamo`` costs a fresh interpreter that already imported torch (what every
capturing child paid before the fork server preloaded it).

    .venv/bin/python bench/bench_zygote.py --children 10
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402,F401
import torch._dynamo  # noqa: E402,F401

from harness import zygote  # noqa: E402

PROBE = (
    "from seam import BreakableGraph, CaptureMode, EmulatedBackend, GraphCaptureScope\n"
    "b = EmulatedBackend(); g = BreakableGraph(b, CaptureMode.FULL); x = b.alloc((2,))\n"
    "with GraphCaptureScope(b, b.default_queue(), g):\n"
    "    x.add_(1)\n"
    "print('captured', g.captured)\n"
)
DYNAMO = "import time, torch; t = time.perf_counter(); import torch._dynamo; print(time.perf_counter() - t)"


def walls(children: int) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = []
    for _ in range(children):
        started = time.perf_counter()
        done = zygote.run_python(["-c", PROBE], env=env, cwd=ROOT, timeout=120)
        out.append(time.perf_counter() - started)
        if done.returncode != 0 or done.stdout.strip() != "captured True":
            raise RuntimeError(f"the probe failed: {done.returncode} {done.stdout!r} {done.stderr[-400:]!r}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=10)
    args = parser.parse_args()
    gc.collect()
    gc.freeze()  # as the fork server does before it forks a run's child
    zygote.ZYGOTE = zygote.Zygote.fork()
    try:
        forked = walls(args.children)
    finally:
        zygote.ZYGOTE.close()
        zygote.ZYGOTE = None
    real = walls(args.children)
    dynamo = float(subprocess.run([sys.executable, "-c", DYNAMO], capture_output=True, text=True, check=True).stdout)
    med = statistics.median
    print(f"children: {args.children} each; probe: import seam, capture one scope on the emulator")
    print(f"forked from a zygote : {med(forked) * 1000:8.1f} ms per child (median)")
    print(f"a real interpreter   : {med(real) * 1000:8.1f} ms per child (median)")
    print(f"ratio (real/forked)  : {med(real) / med(forked):.1f}x")
    print(f"import torch._dynamo after torch, in a fresh interpreter: {dynamo * 1000:.0f} ms")


if __name__ == "__main__":
    main()
