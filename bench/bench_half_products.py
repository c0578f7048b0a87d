"""Benchmark: emulated work under ``torch.autocast("cuda")``, with and without the half-product route.

Under autocast every matrix product runs in float16, and a CPU build's own float16 matrix kernels are, on a
CPU without fp16 arithmetic, hundreds of times slower than its float32 ones. The emulated device runs a
float16 product as cuBLAS computes it: the float32 product of float32 copies, rounded once
(``seam/torch_cuda/half_gemm.py``). This times a stack of identical layers written against ``torch.cuda``
(``bench_torch_cuda``'s) under autocast, three ways in one process, interleaved: ``route`` (the emulator as
it is), ``cpu_half`` (the route turned off: the CPU's own float16 kernels) and ``host_fp32`` (the same
forward on plain CPU torch in float32, no emulation: the floor). The emulated two are also replayed from
a graph captured under autocast (the replay re-issues the products) and timed over a training step (the
forward and its backward, whose products take the weights' transposes), and a convolution's training step.

    python bench/bench_half_products.py [--hidden 1024] [--layers 4] [--batch 512] [--rounds 3] [--json FILE]

Exit 0 when the route's forward is faster than the CPU's own float16 one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from seam.torch_cuda import emulate_cuda, half_gemm  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_capture_cost import _seconds  # noqa: E402
from bench_torch_cuda import _model  # noqa: E402  (the same stack of layers the eager and replay bench time)


def _forward(model: torch.nn.Module, x: torch.Tensor) -> None:
    with torch.autocast("cuda"):
        model(x)
    torch.cuda.synchronize()


def _step(model: torch.nn.Module, x: torch.Tensor) -> None:
    """A training step under autocast: the forward's products (or convolutions) and their backward."""
    with torch.enable_grad():
        with torch.autocast("cuda"):
            loss = model(x).float().square().mean()
        loss.backward()
    torch.cuda.synchronize()


def _graphed(model: torch.nn.Module, x: torch.Tensor) -> torch.cuda.CUDAGraph:
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.autocast("cuda"):
        model(x)  # warm up on the capture's stream, as CUDA-graph code does
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s), torch.autocast("cuda"):
        model(x)
    torch.cuda.synchronize()
    return g


def _replay(g: torch.cuda.CUDAGraph) -> None:
    g.replay()
    torch.cuda.synchronize()


def _route_off() -> Callable[[], None]:
    """The CPU's own float16 kernels, for the length of one measurement."""
    real = half_gemm.all_half
    half_gemm.all_half = lambda values: False  # type: ignore[assignment]

    def restore() -> None:
        half_gemm.all_half = real  # type: ignore[assignment]
    return restore


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hidden", type=int, default=1024, help="width of each layer (default 1024)")
    ap.add_argument("--layers", type=int, default=4, help="Linear+LayerNorm+GELU blocks (default 4)")
    ap.add_argument("--batch", type=int, default=512, help="rows per step (default 512)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    host = _model(args.hidden, args.layers, "cpu")
    hx = torch.randn(args.batch, args.hidden)  # [B, H]
    fp32, route, half, route_replay, half_replay, route_step, half_step = [], [], [], [], [], [], []
    route_conv, half_conv = [], []
    with emulate_cuda(), torch.no_grad():
        model = _model(args.hidden, args.layers, "cuda")
        x = hx.to("cuda")
        conv = torch.nn.Conv2d(64, 64, 3, padding=1).cuda()
        images = torch.randn(8, 64, 32, 32, device="cuda")  # [N, C, H, W]
        g_route = _graphed(model, x)
        restore = _route_off()
        try:
            g_half = _graphed(model, x)
        finally:
            restore()
        for _ in range(args.rounds):  # interleaved: drift hits every side alike
            route.append(_seconds(lambda: _forward(model, x)))
            route_replay.append(_seconds(lambda: _replay(g_route)))
            route_step.append(_seconds(lambda: _step(model, x)))
            route_conv.append(_seconds(lambda: _step(conv, images)))
            restore = _route_off()
            try:
                half.append(_seconds(lambda: _forward(model, x)))
                half_replay.append(_seconds(lambda: _replay(g_half)))
                half_step.append(_seconds(lambda: _step(model, x)))
                half_conv.append(_seconds(lambda: _step(conv, images)))
            finally:
                restore()
            fp32.append(_seconds(lambda: host(hx)))
    f, r, h, rr, hr, rs, hs, rc, hc = (statistics.median(side) for side in (
        fp32, route, half, route_replay, half_replay, route_step, half_step, route_conv, half_conv))
    result = {
        "model": f"{args.layers} x (Linear+LayerNorm+GELU), hidden={args.hidden}, batch={args.batch}, "
                 "under torch.autocast('cuda') (float16 products)",
        "timing": f"median over {args.rounds} interleaved rounds, one call each, one thread",
        "host_fp32_forward_ms": round(f * 1e3, 2),
        "route_forward_ms": round(r * 1e3, 2),
        "cpu_half_forward_ms": round(h * 1e3, 2),
        "route_replay_ms": round(rr * 1e3, 2),
        "cpu_half_replay_ms": round(hr * 1e3, 2),
        "route_training_step_ms": round(rs * 1e3, 2),
        "cpu_half_training_step_ms": round(hs * 1e3, 2),
        "conv": "Conv2d(64, 64, 3, padding=1) on [8, 64, 32, 32], forward and backward under autocast",
        "route_conv_step_ms": round(rc * 1e3, 2),
        "cpu_half_conv_step_ms": round(hc * 1e3, 2),
        "ratio_cpu_half_over_route_forward": round(h / r, 2),
        "ratio_cpu_half_over_route_replay": round(hr / rr, 2),
        "ratio_cpu_half_over_route_training_step": round(hs / rs, 2),
        "ratio_cpu_half_over_route_conv_step": round(hc / rc, 2),
        "ratio_route_forward_over_host_fp32": round(r / f, 2),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0 if r < h else 1


if __name__ == "__main__":
    raise SystemExit(main())
