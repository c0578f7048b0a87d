"""Benchmark: how long an emulated capture stays open, and how much of it recording one operation takes.

Another thread's ``torch.cuda.synchronize()`` is refused while any capture of the device is open, so how long a
capture stays open decides how often two threads capturing at once (breakable- and piecewise-cuda-graphs'
``TestConcurrentCaptures``) meet each other's capture; a GPU's stays open for microseconds. This times, in a fresh
process, a process's FIRST capture (``capture_begin``, one recorded ``copy_`` of five floats, ``capture_end``, on a
side stream in thread_local mode, after the stream's warm-up) and the median of ``--reps`` later ones, each part in
microseconds.

    python bench/bench_capture_window.py [--reps 300] [--json FILE]

To compare trees: ``git archive COMMIT seam | tar -x -C TREE``, copy this file into ``TREE/bench``, run it there.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from seam.torch_cuda import emulate_cuda  # noqa: E402

PARTS = ("begin", "recorded_copy", "end")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300, help="later captures timed (default 300)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    with emulate_cuda():
        side = torch.cuda.Stream()
        a, b = torch.empty(5, device="cuda"), torch.empty(5, device="cuda")
        with torch.cuda.stream(side):
            for _ in range(3):  # the warm-up a capture follows
                a.fill_(2.0)
                b.copy_(a)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        seen: list[tuple[float, float, float]] = []
        for i in range(args.reps + 1):
            if i:
                graph.reset()
            with torch.cuda.stream(side):
                t0 = time.perf_counter()
                graph.capture_begin(capture_error_mode="thread_local")
                t1 = time.perf_counter()
                b.copy_(a)
                t2 = time.perf_counter()
                graph.capture_end()
                t3 = time.perf_counter()
            seen.append(((t1 - t0) * 1e6, (t2 - t1) * 1e6, (t3 - t2) * 1e6))
    out = {"first_us": dict(zip(PARTS, (round(v, 1) for v in seen[0]))),
           f"median_of_{args.reps}_later_us": {p: round(statistics.median(s[i] for s in seen[1:]), 1)
                                               for i, p in enumerate(PARTS)}}
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
