"""GPU benchmarks of the seam on a CUDA device (run on the H200 through the device tool).

1. ``BreakableGraph`` FULL replay vs a raw ``torch.cuda.CUDAGraph`` replay of the same work
   (target: at most 2% slower);
2. PIECEWISE with 4 segments (3 trivial eager breaks) vs 4 raw graphs replayed back to back;
3. eager vs captured decode step of a small model (the speed-up).

Each pair is measured in ONE process, interleaved over rounds, as the median time per replay of a
burst of back-to-back replays closed by one synchronize (what a serving loop does). The difference
is the median of the PAIRED per-round ratios (side a's burst against side b's burst right after it),
after warm-up rounds that are thrown away, with its interquartile range: a burst slowed by the
host (another process, a clock change) slows one pair, not the figure. ``--repeat N`` measures each
comparison N times in the process and reports every repeat's figure and their spread, so two commits
are compared by ranges, not by one draw (PIECEWISE, launch-bound, read +1.5% and +51% over raw in two
single draws of the same commit: issue 27).

    python bench/bench_cuda.py [--out DIR] [--rounds 21] [--warmup 3] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from seam import BreakableGraph, CaptureMode, CudaBackend, GraphCaptureScope, capture_one  # noqa: E402
from seam.testing import TinyModel  # noqa: E402


def per_call_us(fn: Callable[[], None], burst: int, rounds: int) -> list[float]:
    """Median-able samples: time per call of ``burst`` back-to-back calls, then one synchronize."""
    out = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(burst):
            fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) / burst * 1e6)
    return out


#: Rounds run and thrown away before the measured ones (lazy module loads, clocks ramping up).
WARMUP = 3


def interleaved(a: Callable[[], None], b: Callable[[], None], burst: int, rounds: int) -> tuple[float, float]:
    """Median us per call of each side; the paired ratios are kept in ``LAST_RATIOS`` for ``difference``."""
    for _ in range(WARMUP):
        per_call_us(a, burst, 1)
        per_call_us(b, burst, 1)
    sa, sb = [], []
    for _ in range(rounds):
        sa += per_call_us(a, burst, 1)
        sb += per_call_us(b, burst, 1)
    LAST_RATIOS[:] = [x / y for x, y in zip(sa, sb)]
    return statistics.median(sa), statistics.median(sb)


#: The paired per-round ratios a/b of the newest ``interleaved`` call.
LAST_RATIOS: list[float] = []


def difference() -> dict:
    """The median paired difference of the newest ``interleaved`` call, in %, with its interquartile range."""
    q1, _, q3 = statistics.quantiles(LAST_RATIOS, n=4)
    return {"pct": round((statistics.median(LAST_RATIOS) - 1) * 100, 2),
            "iqr_pct": [round((q1 - 1) * 100, 2), round((q3 - 1) * 100, 2)]}


def layer_stack(x: torch.Tensor, weights: list[torch.Tensor]) -> torch.Tensor:
    h = x
    for w in weights:
        h = torch.nn.functional.gelu(h @ w) + h  # [B, H]
    return h


def raw_graph(stream: torch.cuda.Stream, fn: Callable[[], object], pool) -> torch.cuda.CUDAGraph:
    g = torch.cuda.CUDAGraph()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()  # warm (cuBLAS handles, allocator)
        torch.cuda.synchronize()
        g.capture_begin(pool=pool)
        fn()
        g.capture_end()
    return g


def bench_full(backend: CudaBackend, hidden: int, layers: int, batch: int, burst: int, rounds: int) -> dict:
    gen = torch.Generator(device="cuda").manual_seed(0)
    weights = [torch.randn(hidden, hidden, device="cuda", generator=gen) * hidden**-0.5 for _ in range(layers)]
    x = backend.alloc((batch, hidden))
    q = backend.default_queue()
    with torch.no_grad():
        done = capture_one(lambda: layer_stack(x, weights), backend=backend, graph=CaptureMode.FULL)
        raw = raw_graph(q.native, lambda: layer_stack(x, weights), torch.cuda.graph_pool_handle())
        stream = q.native

        def raw_replay() -> None:
            with torch.cuda.stream(stream):
                raw.replay()

        seam_us, raw_us = interleaved(lambda: done.graph.replay(q), raw_replay, burst, rounds)
    paired = difference()
    return {"work": f"{layers} x (matmul [{batch},{hidden}]x[{hidden},{hidden}] + gelu + add)",
            "breakable_full_us": round(seam_us, 2), "raw_cudagraph_us": round(raw_us, 2),
            "slowdown_pct": paired["pct"], "slowdown_iqr_pct": paired["iqr_pct"], "target_pct": "<= 2"}


def bench_piecewise(backend: CudaBackend, hidden: int, layers: int, batch: int, burst: int, rounds: int) -> dict:
    gen = torch.Generator(device="cuda").manual_seed(1)
    weights = [torch.randn(hidden, hidden, device="cuda", generator=gen) * hidden**-0.5 for _ in range(layers)]
    chunks = [weights[i::4] for i in range(4)]
    x = backend.alloc((batch, hidden))
    q = backend.default_queue()
    graph = BreakableGraph(backend, CaptureMode.PIECEWISE)
    with torch.no_grad():
        for _ in range(2):
            layer_stack(x, weights)
        torch.cuda.synchronize()
        with GraphCaptureScope(backend, q, graph) as scope:
            h = x
            for i, chunk in enumerate(chunks):
                h = layer_stack(h, chunk)
                if i < 3:
                    scope.break_point(lambda: None)
        pool = torch.cuda.graph_pool_handle()
        bufs = [x]
        raws = []
        for chunk in chunks:
            src = bufs[-1]
            out: list[torch.Tensor] = []
            raws.append(raw_graph(q.native, lambda src=src, chunk=chunk, out=out: out.append(layer_stack(src, chunk)), pool))
            bufs.append(out[-1])
        stream = q.native

        def raw_replay() -> None:
            with torch.cuda.stream(stream):
                for g in raws:
                    g.replay()

        seam_us, raw_us = interleaved(lambda: graph.replay(q), raw_replay, burst, rounds)
    paired = difference()
    return {"segments": len(graph.segments), "breakable_piecewise_us": round(seam_us, 2),
            "four_raw_graphs_us": round(raw_us, 2), "slowdown_pct": paired["pct"], "slowdown_iqr_pct": paired["iqr_pct"]}


def bench_decode(backend: CudaBackend, burst: int, rounds: int) -> dict:
    model = TinyModel(backend, hidden=256, layers=8)
    x = backend.alloc((1, 256))  # [B=1, H]: a T=1 decode step
    q = backend.default_queue()
    with torch.no_grad():
        done = capture_one(lambda: model.forward(x), backend=backend, graph=CaptureMode.FULL)

        def eager() -> None:
            with torch.cuda.stream(q.native):
                model.forward(x)

        eager_us, graph_us = interleaved(eager, lambda: done.graph.replay(q), burst, rounds)
    return {"model": "TinyModel(hidden=256, layers=8), batch 1", "eager_step_us": round(eager_us, 2),
            "captured_step_us": round(graph_us, 2), "speedup": round(eager_us / graph_us, 2)}


def repeated(measure: Callable[[], dict], times: int) -> dict:
    """The first measurement's fields, plus every repeat's headline figure and their spread (max - min)."""
    runs = [measure() for _ in range(times)]
    key = "slowdown_pct" if "slowdown_pct" in runs[0] else "speedup"
    figures = [r[key] for r in runs]
    return {**runs[0], f"{key}_repeats": figures, f"{key}_spread": round(max(figures) - min(figures), 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="folder for bench_cuda.json")
    ap.add_argument("--burst", type=int, default=200, help="replays per timed burst (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=21, help="measured rounds per comparison (default: %(default)s)")
    ap.add_argument("--warmup", type=int, default=WARMUP, help="rounds thrown away first (default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="measure each comparison this many times and report each and their spread (default: %(default)s)")
    args = ap.parse_args(argv)
    globals()["WARMUP"] = args.warmup
    if not torch.cuda.is_available():
        result = {"status": "OWED", "reason": "no CUDA device (torch.cuda.is_available() is False)"}
        print(json.dumps(result))
        return 0
    backend = CudaBackend()
    props = torch.cuda.get_device_properties(0)
    result = {
        "device": props.name, "capability": f"{props.major}.{props.minor}", "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "full_vs_raw_small": repeated(lambda: bench_full(backend, 1024, 16, 8, args.burst, args.rounds), args.repeat),
        "full_vs_raw_large": repeated(lambda: bench_full(backend, 4096, 16, 64, args.burst // 4, args.rounds),
                                      args.repeat),
        "piecewise4_vs_4raw": repeated(lambda: bench_piecewise(backend, 1024, 16, 8, args.burst, args.rounds),
                                       args.repeat),
        "decode_eager_vs_captured": repeated(lambda: bench_decode(backend, args.burst, args.rounds), args.repeat),
    }
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_cuda.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
