"""Benchmark: the emulated torch.cuda against plain CPU torch, and its replay against its eager forward.

Targets (issue 24): plain eager work inside ``emulate_cuda()``, outside any capture, costs at most
1.5x the same work on plain CPU torch; a replay of a ``torch.cuda.CUDAGraph`` captured under the
emulator costs at most 1.5x the emulated eager forward. One process, one machine, interleaved
rounds, ratios of medians of each round's MEAN call: work the emulator does once every so many calls
(the allocator model plays its log every ``FLUSH_AT`` events, several times in each round) is paid by the
calls it serves, where a median of single calls would leave it out; the median over rounds keeps a
round that another process disturbed from moving the figure. The model is a small MLP decoder step written against ``torch.cuda``
(``--hidden`` sets its size: the smaller it is, the more the per-operation cost of the emulator's
dispatch shows; the figure is printed with the size it was measured at). The same forward under a
dispatch mode that only calls each operation is measured beside them: the floor that any emulation
at torch's dispatcher pays, which no work in the emulator can remove.

    python bench/bench_torch_cuda.py [--hidden 512] [--layers 4] [--batch 8] [--reps 200] [--rounds 7] [--json FILE]
    python bench/bench_torch_cuda.py --per-aten-op [--hidden 64]   # each aten call of the forward alone
    python bench/bench_torch_cuda.py --parts [--hidden 512]        # where the eager forward's time goes
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

from seam.torch_cuda import emulate_cuda  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402


class _NoopMode(TorchDispatchMode):
    """A dispatch mode that only calls the operation: the floor any emulation at the dispatcher pays."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        return func(*args, **(kwargs or {}))


# Called as is, as the emulator's device mode is (``seam/torch_cuda/dispatch.py``): torch's dynamo
# guard around a mode's ``__torch_dispatch__`` costs a microsecond or more per operation, which
# would make the floor look higher than the emulator's.
_NoopMode.__torch_dispatch__ = getattr(_NoopMode.__torch_dispatch__, "__wrapped__",  # type: ignore[method-assign]
                                       _NoopMode.__torch_dispatch__)


def _per_op(reps: int) -> dict[str, float]:
    """One small ``x + x`` ([8, 64]): plain, under a do-nothing dispatch mode, under the emulator (us)."""
    x = torch.randn(8, 64)
    out = {"plain": _median_us(lambda: x + x, reps)}
    with _NoopMode():
        out["noop_dispatch_mode"] = _median_us(lambda: x + x, reps)
    with emulate_cuda():
        y = x.cuda()
        out["emulated"] = _median_us(lambda: y + y, reps)
    return {k: round(v, 2) for k, v in out.items()}


def _per_aten_op(hidden: int, reps: int, rounds: int = 9) -> dict[str, dict[str, float]]:
    """Each aten call of the forward alone ([8, hidden]): plain, under the do-nothing mode, under the
    emulator; the minimum over ``rounds`` of medians of ``reps`` calls (us): where the emulator's own
    time goes, operation by operation."""
    def calls(dev: str) -> dict[str, Callable[[], object]]:
        x, w, b = torch.randn(8, hidden, device=dev), torch.randn(hidden, hidden, device=dev), torch.randn(hidden, device=dev)
        return {"t": lambda: w.t(), "addmm": lambda: torch.addmm(b, x, w),
                "native_layer_norm": lambda: torch.layer_norm(x, [hidden], b, b),
                "gelu": lambda: torch.nn.functional.gelu(x), "add": lambda: x + x}
    plain = calls("cpu")
    with emulate_cuda():
        emulated = calls("cuda")
        emulated["addmm"]()  # the thread's cuBLAS handle
    seen: dict[str, dict[str, list[float]]] = {op: {"plain": [], "noop_dispatch_mode": [], "emulated": []} for op in plain}
    for _ in range(rounds):
        for op in plain:
            seen[op]["plain"].append(_median_us(plain[op], reps))
            with _NoopMode():
                seen[op]["noop_dispatch_mode"].append(_median_us(plain[op], reps))
            with emulate_cuda():
                seen[op]["emulated"].append(_median_us(emulated[op], reps))
    return {op: {k: round(min(v), 2) for k, v in by.items()} for op, by in seen.items()}


def _parts(hidden: int, layers: int, batch: int, reps: int, rounds: int) -> dict[str, float]:
    """Where the emulated eager forward's time goes, each a ratio over plain CPU torch (medians of interleaved
    rounds' means): ``passthrough``, every other part of ``emulate_cuda()`` on with the device mode only calling
    each operation as it calls it (``fast_calls.py``: the emulator's floor at the dispatcher); ``no_log_play``, the
    whole device mode with the allocator model's log never played inside a round (played between rounds, untimed);
    ``whole``, all of it. So whole - no_log_play is the log's play, no_log_play - passthrough the device mode's own
    work per operation."""
    from seam.torch_cuda import allocator
    from seam.torch_cuda.dispatch import DeviceMode, _info
    from seam.torch_cuda.runtime import runtime

    whole_mode = DeviceMode.__torch_dispatch__

    def passthrough(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        return _info(func).call(*args, **(kwargs or {}))  # the device mode's own call (``fast_calls.py``)

    plain_model, plain_x = _model(hidden, layers, "cpu"), torch.randn(batch, hidden)
    with emulate_cuda(), torch.no_grad():
        model, x = _model(hidden, layers, "cuda"), torch.randn(batch, hidden, device="cuda")
        model(x)
    seen: dict[str, list[float]] = {"plain": [], "passthrough": [], "no_log_play": [], "whole": []}
    flush_at = allocator.FLUSH_AT
    for _ in range(rounds):
        with torch.no_grad():
            seen["plain"].append(_mean_us(lambda: plain_model(plain_x), reps))
        with emulate_cuda(), torch.no_grad():
            seen["whole"].append(_mean_us(lambda: model(x), reps))
            try:
                allocator.FLUSH_AT = 1 << 40
                seen["no_log_play"].append(_mean_us(lambda: model(x), reps))
            finally:
                allocator.FLUSH_AT = flush_at
                runtime().allocator.flush()
            DeviceMode.__torch_dispatch__ = passthrough  # type: ignore[method-assign]
            try:
                seen["passthrough"].append(_mean_us(lambda: model(x), reps))
            finally:
                DeviceMode.__torch_dispatch__ = whole_mode  # type: ignore[method-assign]
    plain = statistics.median(seen["plain"])
    return {"plain_cpu_forward_us": round(plain, 1),
            **{f"{k}_over_plain": round(statistics.median(v) / plain, 3) for k, v in seen.items() if k != "plain"}}


def _mean_us(fn: Callable[[], object], reps: int) -> float:
    """The mean time of ``reps`` calls in a row (us): what a caller pays, periodic work included."""
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps * 1e6


def _median_us(fn: Callable[[], object], reps: int) -> float:
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e6


def _model(hidden: int, layers: int, device: str) -> torch.nn.Module:
    torch.manual_seed(0)
    blocks: list[torch.nn.Module] = []
    for _ in range(layers):
        blocks += [torch.nn.Linear(hidden, hidden), torch.nn.LayerNorm(hidden), torch.nn.GELU()]
    return torch.nn.Sequential(*blocks).to(device).eval()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hidden", type=int, default=512, help="width of each layer (default 512)")
    ap.add_argument("--layers", type=int, default=4, help="Linear+LayerNorm+GELU blocks (default 4)")
    ap.add_argument("--batch", type=int, default=8, help="rows per step (default 8)")
    ap.add_argument("--reps", type=int, default=200, help="timed calls per round (default 200)")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--per-aten-op", action="store_true",
                    help="only time each aten call of the forward alone (plain, do-nothing mode, emulator) and print it")
    ap.add_argument("--parts", action="store_true",
                    help="only time where the emulated eager forward's time goes (each part over plain) and print it")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if args.parts:
        print(json.dumps(_parts(args.hidden, args.layers, args.batch, args.reps, args.rounds), indent=1))
        return 0
    if args.per_aten_op:
        with torch.no_grad():
            print(json.dumps(_per_aten_op(args.hidden, args.reps * 10), indent=1))
        return 0
    plain_model = _model(args.hidden, args.layers, "cpu")
    plain_x = torch.randn(args.batch, args.hidden)  # [B, H]
    with emulate_cuda(), torch.no_grad():
        model = _model(args.hidden, args.layers, "cuda")
        x = torch.randn(args.batch, args.hidden, device="cuda")  # [B, H]
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            model(x)  # warm up: the thread's cuBLAS handle exists before the capture
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            static_out = model(x)
        g.replay()
        if not torch.allclose(static_out, model(x)):
            raise SystemExit("the replay disagrees with the eager forward: nothing to measure")
    plain, floor, eager, replay = [], [], [], []
    for _ in range(args.rounds):  # interleaved rounds: drift hits every side alike
        with torch.no_grad():
            plain.append(_mean_us(lambda: plain_model(plain_x), args.reps))
            with _NoopMode():
                floor.append(_mean_us(lambda: plain_model(plain_x), args.reps))
        with emulate_cuda(), torch.no_grad():
            eager.append(_mean_us(lambda: model(x), args.reps))
            # a replay launches and returns (seam/torch_cuda/in_flight.py): each call waits for its work, as on a GPU
            replay.append(_mean_us(lambda: (g.replay(), torch.cuda.synchronize()), args.reps))
    p, e, r, f = (statistics.median(side) for side in (plain, eager, replay, floor))
    result = {
        "model": f"{args.layers} x (Linear+LayerNorm+GELU), hidden={args.hidden}, batch={args.batch}",
        "timing": f"median over {args.rounds} interleaved rounds of each round's mean of {args.reps} calls",
        "plain_cpu_forward_us": round(p, 1),
        "noop_dispatch_mode_forward_us": round(f, 1),
        "ratio_noop_dispatch_mode_over_plain": round(f / p, 3),
        "emulated_eager_forward_us": round(e, 1),
        "emulated_replay_us": round(r, 1),
        "ratio_emulated_eager_over_plain": round(e / p, 3),
        "ratio_replay_over_emulated_eager": round(r / e, 3),
        "targets": "each ratio <= 1.5",
        "per_op_add_8x64_us": _per_op(args.reps * 10),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0 if e / p <= 1.5 and r / e <= 1.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
