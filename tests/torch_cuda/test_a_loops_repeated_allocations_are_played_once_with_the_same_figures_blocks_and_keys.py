"""The allocator model plays a loop's repeats once (``seam/torch_cuda/allocator_cycles.py``), and ends where an
event-by-event play ends: every figure, every block of every segment, every key and the storage each block serves.

Each case is a random loop: weights made before it and never freed, a cycle of allocations (small, large,
over 10 MiB, on a second stream or a private pool now and then) of which some are freed in the same cycle
and some in the next or the one after (an engine's output, a cache), a random prelude, and a random tail.
The log is cut into windows at random (a figure read between them), so blocks made in one window are freed
in the next. The same log is played event by event into a second model, and both are compared.
"""

from __future__ import annotations

import random
import weakref
from typing import Any

import pytest

from seam.torch_cuda import allocator_cycles
from seam.torch_cuda.allocator import DEFAULT_POOL, CachingAllocator

SIZES = (32, 512, 16384, 1 << 20, (1 << 20) + 512, 3 << 20, 12 << 20)


class _Storage:
    """What the model's owner reference points at: a storage with an address of its own."""

    addresses = iter(range(0x10000, 1 << 40, 0x1000))

    def __init__(self) -> None:
        self.address = next(self.addresses)

    def data_ptr(self) -> int:
        return self.address


class _Program:
    """A log written as ``kinds._allocated`` writes it: an allocation's tuple, a storage's death its weak reference."""

    def __init__(self) -> None:
        self.log: list[Any] = []
        self.live: dict[int, tuple[Any, Any]] = {}  # by handle: (storage, its reference)
        self.refs: list[Any] = []  # every reference, kept: a key (its id) is never reused
        self.handles = iter(range(1 << 30))

    def allocate(self, nbytes: int, stream: int = 0, pool: tuple[int, int] = DEFAULT_POOL) -> int:
        storage = _Storage()
        ref = weakref.ref(storage)
        self.refs.append(ref)
        handle = next(self.handles)
        self.live[handle] = (storage, ref)
        self.log.append((0, id(ref), nbytes, stream, pool, ref))
        return handle

    def free(self, handle: int) -> None:
        _, ref = self.live.pop(handle)
        self.log.append(ref)


def _loop(rng: random.Random) -> _Program:
    program = _Program()
    weights = [program.allocate(rng.choice(SIZES)) for _ in range(rng.randrange(1, 6))]
    for _ in range(rng.randrange(0, 30)):  # a prelude of no pattern
        if program.live and rng.random() < 0.4:
            handle = rng.choice([h for h in program.live if h not in weights] or [None])
            if handle is not None:
                program.free(handle)
                continue
        program.allocate(rng.choice(SIZES))
    # one cycle: each slot's allocation, where (stream, pool), and when its block is freed: right after the next
    # slot's allocation (-1), at the end of the cycle (0), or in the cycle 1, 2 or 5 later, before that cycle's
    # allocation of the same slot
    slots = [(rng.choice(SIZES), rng.choice((-1, -1, 0, 0, 0, 0, 1, 1, 1, 2, 2, 5)),
              rng.choice(((0, DEFAULT_POOL),) * 6 + ((7, DEFAULT_POOL), (0, (0, 3))))) for _ in range(rng.randrange(1, 12))]
    later: dict[tuple[int, int], int] = {}  # (cycle, slot) -> the handle to free then
    for cycle in range(rng.randrange(16, 80)):
        soon: list[int] = []
        end: list[int] = []
        for slot, (size, lives, (stream, pool)) in enumerate(slots):
            if (cycle, slot) in later:
                program.free(later.pop((cycle, slot)))
            handle = program.allocate(size, stream, pool)
            for old in soon:
                program.free(old)
            soon = [handle] if lives == -1 else []
            if lives == 0:
                end.append(handle)
            elif lives > 0:
                later[(cycle + lives, slot)] = handle
        for handle in soon + end:
            program.free(handle)
    for _ in range(rng.randrange(0, len(slots) * 2)):  # a tail of no pattern
        if program.live and rng.random() < 0.5:
            program.free(rng.choice(list(program.live)))
        else:
            program.allocate(rng.choice(SIZES))
    return program


def _state(model: CachingAllocator) -> dict[str, Any]:
    return {"figures": model.stats.nested(), "snapshot": model.snapshot(), "serial": model.serial,
            "active": {key: (block.address, block.size, block.requested, block.serial, block.owner, block.key)
                       for key, block in model.active.items()}}


def _windows(rng: random.Random, log: list[Any]) -> list[list[Any]]:
    cuts = sorted(rng.sample(range(1, len(log)), k=min(len(log) - 1, rng.randrange(0, 4))))
    return [log[a:b] for a, b in zip([0, *cuts], [*cuts, len(log)])]


@pytest.mark.parametrize("seed", range(60))
def test_a_loop_played_with_its_repeats_skipped_ends_where_the_event_by_event_play_ends(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    program = _loop(rng)
    monkeypatch.setattr(allocator_cycles, "MIN_WINDOW", 64)
    skipping, one_by_one = CachingAllocator(), CachingAllocator()
    played = []
    plain_play = CachingAllocator.play
    monkeypatch.setattr(CachingAllocator, "play", lambda self, log: (played.append(len(log)) if self is skipping else None,
                                                                      plain_play(self, log))[1])
    for window in _windows(rng, program.log):
        skipping.log.extend(window)
        skipping.flush()
        one_by_one.play(window)
        assert _state(skipping) == _state(one_by_one)
    assert sum(played) <= len(program.log)


def test_the_loops_above_do_skip_cycles(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above means something only if repeats are skipped: over the 60 loops, more than half the events are."""
    monkeypatch.setattr(allocator_cycles, "MIN_WINDOW", 64)
    played = total = 0
    plain_play = CachingAllocator.play

    def counted(self: CachingAllocator, log: list[Any]) -> None:
        nonlocal played
        played += len(log)
        plain_play(self, log)
    monkeypatch.setattr(CachingAllocator, "play", counted)
    for seed in range(60):
        rng = random.Random(seed)
        program = _loop(rng)
        total += len(program.log)
        model = CachingAllocator()
        for window in _windows(rng, program.log):
            model.log.extend(window)
            model.flush()
    assert played < total / 2, f"{played} of {total} events played one by one: the loops' repeats were not skipped"


def test_a_window_with_no_repeat_or_a_model_too_large_to_compare_is_played_event_by_event(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    program = _Program()
    for _ in range(400):
        if program.live and rng.random() < 0.45:
            program.free(rng.choice(list(program.live)))
        else:
            program.allocate(rng.choice(SIZES))
    model = CachingAllocator()
    assert allocator_cycles._cycle(model, program.log) is None  # random: no tail repeats four times
    loop = _Program()
    weights = [loop.allocate(512) for _ in range(300)]
    for _ in range(100):
        loop.free(loop.allocate(512))
    big = CachingAllocator()
    big.play(loop.log[:300])
    assert weights and allocator_cycles._cycle(big, loop.log[300:]) is None  # 300 blocks, 200 events
    assert allocator_cycles._cycle(CachingAllocator(), loop.log[300:]) is not None
