"""Benchmark: what an emulated capture costs, as a multiple of the eager forward it captures.

At capture the emulator chooses how each functional operation replays (as is, or through its ``out=``
overload) by timing both forms: a warm-up and seven samples each (``seam/emulator.py`` ``_cost``). Since
session 38 the decision is kept per call signature (the operation, its tensors' shapes, strides and
dtypes, its other arguments), and a call of a millisecond or more is timed once after its warm-up. This
measures a capture of a stack of identical layers written against ``torch.cuda`` (``torch.cuda.graph``
after a warm-up on its stream, as CUDA-graph code does) against the eager forward, both ways in one
process, interleaved: ``kept`` (the emulator as it is) and ``every_call`` (each call timed at every
capture, seven samples whatever it costs: the emulator before session 38). The first capture of
``kept`` times each signature once; later captures of the same body (a graph per batch size in an
engine) time nothing, so ``kept`` is given as the first capture and the next.

    python bench/bench_capture_cost.py [--hidden 1024] [--layers 8] [--batch 64] [--rounds 3] [--json FILE]

Exit 0 when ``kept``'s first capture costs less than ``every_call``'s (the change pays for itself).
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

from seam import emulator  # noqa: E402
from seam.torch_cuda import emulate_cuda  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_torch_cuda import _model  # noqa: E402  (the same stack of layers the eager and replay bench time)


def _seconds(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _capture(model: torch.nn.Module, x: torch.Tensor, s: torch.cuda.Stream) -> None:
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        model(x)


def _every_call() -> Callable[[], None]:
    """The emulator before session 38, for the length of one capture: no kept decisions, seven samples always."""
    signature, long_ns = emulator._signature, emulator._LONG_NS
    emulator._signature = lambda *a, **k: None  # type: ignore[assignment]
    emulator._LONG_NS = float("inf")  # type: ignore[assignment]

    def restore() -> None:
        emulator._signature, emulator._LONG_NS = signature, long_ns  # type: ignore[assignment]
    return restore


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hidden", type=int, default=1024, help="width of each layer (default 1024)")
    ap.add_argument("--layers", type=int, default=8, help="Linear+LayerNorm+GELU blocks (default 8)")
    ap.add_argument("--batch", type=int, default=64, help="rows per step (default 64)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    eager, every, first, next_ = [], [], [], []
    with emulate_cuda(), torch.no_grad():
        model = _model(args.hidden, args.layers, "cuda")
        x = torch.randn(args.batch, args.hidden, device="cuda")  # [B, H]
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            model(x)  # warm up on the capture's stream, as CUDA-graph code does
        torch.cuda.synchronize()
        for _ in range(args.rounds):  # interleaved: drift hits every side alike
            eager.append(_seconds(lambda: (model(x), torch.cuda.synchronize())))
            restore = _every_call()
            try:
                every.append(_seconds(lambda: _capture(model, x, s)))
            finally:
                restore()
            emulator._FASTER.clear()  # a first capture: nothing decided yet
            first.append(_seconds(lambda: _capture(model, x, s)))
            next_.append(_seconds(lambda: _capture(model, x, s)))
    e, v, f, n = (statistics.median(side) for side in (eager, every, first, next_))
    result = {
        "model": f"{args.layers} x (Linear+LayerNorm+GELU), hidden={args.hidden}, batch={args.batch}, float32",
        "timing": f"median over {args.rounds} interleaved rounds, one call each",
        "emulated_eager_forward_ms": round(e * 1e3, 2),
        "capture_every_call_timed_ms": round(v * 1e3, 2),
        "capture_kept_first_ms": round(f * 1e3, 2),
        "capture_kept_next_ms": round(n * 1e3, 2),
        "ratio_every_call_over_eager": round(v / e, 2),
        "ratio_kept_first_over_eager": round(f / e, 2),
        "ratio_kept_next_over_eager": round(n / e, 2),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0 if f < v else 1


if __name__ == "__main__":
    raise SystemExit(main())
