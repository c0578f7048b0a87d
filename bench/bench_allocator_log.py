"""Benchmark: what the emulated caching allocator's log costs to play (issue 24, docs/benchmarks.md).

Two figures, on the seam this interpreter imports (``PYTHONPATH=TREE`` measures another tree's):

- the log's play alone: a ``TinyModel``-sized forward (``bench_torch_cuda._model``) run ``--forwards`` times
  inside ``emulate_cuda()``, then one ``runtime().allocator.flush()`` timed; microseconds an event, best of
  ``--rounds``;
- one ``_malloc`` + ``_free`` pair of the model alone, microseconds, over ``--pairs`` pairs;
- a window of 2,048 random events that never repeat: its flush (which looks for a repeat, finds none and plays
  it) against its event-by-event play, microseconds an event, best of ``--rounds``: what
  ``allocator_cycles`` costs where nothing repeats.

    python bench/bench_allocator_log.py [--hidden 64] [--forwards 100] [--rounds 15] [--pairs 100000]
"""

from __future__ import annotations

import argparse
import random
import sys
import weakref
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_torch_cuda import _model  # noqa: E402 - the same forward as the eager benchmark (this folder)
from seam.torch_cuda import emulate_cuda  # noqa: E402
from seam.torch_cuda.allocator import DEFAULT_POOL, CachingAllocator  # noqa: E402
from seam.torch_cuda.runtime import runtime  # noqa: E402


def log_play_us(hidden: int, forwards: int, rounds: int) -> float:
    with emulate_cuda(), torch.no_grad():
        model = _model(hidden, 4, "cuda")
        x = torch.randn(8, hidden, device="cuda")
        for _ in range(50):
            model(x)
        allocator = runtime().allocator
        best = float("inf")
        for _ in range(rounds):
            allocator.flush()
            for _ in range(forwards):
                model(x)
            events = len(allocator.log)
            started = time.perf_counter()
            allocator.flush()
            best = min(best, (time.perf_counter() - started) / max(events, 1))
    return best * 1e6


def pair_us(pairs: int) -> float:
    model = CachingAllocator()
    started = time.perf_counter()
    for key in range(pairs):
        model._malloc(key, 2048, 0, DEFAULT_POOL, None)
        model._free(model.active.pop(key))
    return (time.perf_counter() - started) / pairs * 1e6


class _Storage:
    """A weakly referenced object, one an allocation."""


def no_repeat_us(rounds: int) -> tuple[float, float]:
    """(flush, event-by-event play) of 2,048 random events, us an event, best of ``rounds`` each."""
    rng, log, live, kept = random.Random(3), [], [], []
    while len(log) < 2048:
        if live and rng.random() < 0.5:
            log.append(live.pop(rng.randrange(len(live))))  # a storage's death: its weak reference
        else:
            storage = _Storage()  # stands for a device storage; its weak reference's id is the block's key
            ref = weakref.ref(storage)
            kept.append((storage, ref))
            live.append(ref)
            log.append((0, id(ref), rng.choice((32, 512, 16384)), 0, DEFAULT_POOL, None))
    best = {"flush": float("inf"), "play": float("inf")}
    for _ in range(rounds):
        for how in best:
            model = CachingAllocator()
            model.log.extend(log)
            started = time.perf_counter()
            model.flush() if how == "flush" else model.play(log)
            best[how] = min(best[how], (time.perf_counter() - started) / len(log))
    return best["flush"] * 1e6, best["play"] * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--hidden", type=int, default=64, help="width of each layer of the forward")
    parser.add_argument("--forwards", type=int, default=100, help="forwards before each timed play")
    parser.add_argument("--rounds", type=int, default=15, help="timed plays; the best is printed")
    parser.add_argument("--pairs", type=int, default=100000, help="malloc + free pairs of the model alone")
    args = parser.parse_args(argv)
    print(f"log play: {log_play_us(args.hidden, args.forwards, args.rounds):.2f} us an event "
          f"(hidden {args.hidden}, best of {args.rounds})")
    print(f"malloc + free pair: {pair_us(args.pairs):.2f} us")
    flush, play = no_repeat_us(args.rounds)
    print(f"no repeat (2,048 random events): flush {flush:.2f} us an event, event-by-event play {play:.2f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
