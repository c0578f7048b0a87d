"""Benchmark: CPU-emulator replay of a captured forward vs the eager forward of the same model.

Target (issue 2): an emulator replay costs at most 1.5x the eager forward. Both are timed in one
process on the same machine, interleaved, and reported as a ratio of medians.

    python bench/bench_emulator.py [--hidden 64] [--layers 4] [--batch 8] [--reps 300]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from seam import CaptureMode, EmulatedBackend, capture_one  # noqa: E402
from seam.testing import TinyModel  # noqa: E402


def _median_us(fn, reps: int) -> float:
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    backend = EmulatedBackend()
    model = TinyModel(backend, hidden=args.hidden, layers=args.layers)
    x = backend.to_device(torch.randn(args.batch, args.hidden))  # [B, H]
    with torch.no_grad():
        done = capture_one(lambda: model.forward(x), backend=backend, graph=CaptureMode.FULL)
        ops = len(done.graph.segments[0].ops)
        eager, replay = [], []
        for _ in range(5):  # interleave rounds so drift hits both sides alike
            eager.append(_median_us(lambda: model.forward(x), args.reps))
            replay.append(_median_us(done.graph.replay, args.reps))
    e, r = statistics.median(eager), statistics.median(replay)
    result = {
        "model": f"TinyModel(hidden={args.hidden}, layers={args.layers}, batch={args.batch})",
        "recorded_ops": ops,
        "eager_forward_us": round(e, 1),
        "emulator_replay_us": round(r, 1),
        "ratio_replay_over_eager": round(r / e, 3),
        "target": "<= 1.5",
        "torch": torch.__version__,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
