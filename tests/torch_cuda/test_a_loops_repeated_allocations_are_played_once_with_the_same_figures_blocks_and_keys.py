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
        self.keys: dict[int, int] = {}  # every handle's key, freed or not
        self.cycles = (0, 0, 0)  # where a loop's cycles are: (first event, end, how many)

    def allocate(self, nbytes: int, stream: int = 0, pool: tuple[int, int] = DEFAULT_POOL) -> int:
        storage = _Storage()
        ref = weakref.ref(storage)
        self.refs.append(ref)
        handle = next(self.handles)
        self.live[handle] = (storage, ref)
        self.keys[handle] = id(ref)
        self.log.append((0, id(ref), nbytes, stream, pool, ref))
        return handle

    def free(self, handle: int) -> None:
        _, ref = self.live.pop(handle)
        self.log.append(ref)

    def free_by_key(self, handle: int) -> None:
        """``(FREE, key)``, as a workspace or a graph's holder is freed; of a block freed already, a free of nothing."""
        self.live.pop(handle, None)
        self.log.append((1, self.keys[handle]))


def _cycles(program: _Program, slots: list[tuple[int, int, tuple[int, Any]]], cycles: int, free: Any) -> None:
    """``cycles`` cycles of ``slots``, each slot (size, lifetime, (stream, pool)): its block freed right after the next
    slot's allocation (-1), at the cycle's end (0), or in the cycle that many later, before that cycle's allocation
    of the same slot; ``free`` frees a block (its storage's death, or a ``(FREE, key)``)."""
    later: dict[tuple[int, int], int] = {}  # (cycle, slot) -> the handle to free then
    for cycle in range(cycles):
        soon: list[int] = []
        end: list[int] = []
        for slot, (size, lives, (stream, pool)) in enumerate(slots):
            if (cycle, slot) in later:
                free(later.pop((cycle, slot)))
            handle = program.allocate(size, stream, pool)
            for old in soon:
                free(old)
            soon = [handle] if lives == -1 else []
            if lives == 0:
                end.append(handle)
            elif lives > 0:
                later[(cycle + lives, slot)] = handle
        for handle in soon + end:
            free(handle)


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
    begin, cycles = len(program.log), rng.randrange(16, 80)
    _cycles(program, slots, cycles, program.free)
    program.cycles = (begin, len(program.log), cycles)
    for _ in range(rng.randrange(0, len(slots) * 2)):  # a tail of no pattern
        if program.live and rng.random() < 0.5:
            program.free(rng.choice(list(program.live)))
        else:
            program.allocate(rng.choice(SIZES))
    return program


def _state(model: CachingAllocator) -> dict[str, Any]:
    return {"figures": model.stats.nested(), "snapshot": model.snapshot(), "serial": model.serial,
            "active": {key: (block.address, block.size, block.requested, block.serial, block.owner, block.key)
                       for key, block in model.active.items()},
            "private": {pool_id: (pool.use_count, pool.segments) for pool_id, pool in model.private.items()},
            "freeable": sorted(model.freeable)}


def _windows(rng: random.Random, log: list[Any]) -> list[list[Any]]:
    cuts = sorted(rng.sample(range(1, len(log)), k=min(len(log) - 1, rng.randrange(0, 4))))
    return [log[a:b] for a, b in zip([0, *cuts], [*cuts, len(log)])]


def _played_alike(rng: random.Random, program: _Program, monkeypatch: pytest.MonkeyPatch, what: str = "") -> None:
    """``program``'s log, cut into random windows, played with its repeats skipped and event by event: the same
    model after every window."""
    monkeypatch.setattr(allocator_cycles, "MIN_WINDOW", 64)
    skipping, one_by_one = CachingAllocator(), CachingAllocator()
    for window in _windows(rng, program.log):
        skipping.log.extend(window)
        skipping.flush()
        one_by_one.play(window)
        assert _state(skipping) == _state(one_by_one), what


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


#: What changes, from one cycle on, in a loop whose sizes stay the same: what only the signatures and the shapes see.
CHANGES = ("stream", "pool", "size", "lifetime", "free-by-key", "begin-release", "empty", "key-again", "old-block",
           "tail-like-the-cycle", "begin-only", "release-every-other", "release-only", "lifetime-by-key",
           "side-stream-moves", "side-stream-size")


def _changing_loop(rng: random.Random, change: str) -> _Program:
    """A steady loop of a few slots, changed from a cycle near its middle on, then steady again."""
    program = _Program()
    weights = [program.allocate(512) for _ in range(3)]
    slots = [rng.choice(SIZES) for _ in range(rng.randrange(2, 6))]
    cycles, at = rng.randrange(24, 48), rng.randrange(8, 16)
    changed = rng.randrange(len(slots))
    keep: list[int] = []
    for cycle in range(cycles):
        after = cycle >= at
        handles = []
        for slot, size in enumerate(slots):
            stream, pool = 0, DEFAULT_POOL
            if slot == changed and change.startswith("side-stream"):  # neither the window's first stream nor pool's
                stream = 8 if after and change == "side-stream-moves" else 7
                size = size + 512 if after and change == "side-stream-size" else size
            if after and slot == changed:
                if change == "stream":
                    stream = 7
                elif change == "pool":
                    pool = (0, 3)
                elif change == "size":
                    size = size + 512
            if after and slot == changed and (change in ("begin-release", "begin-only", "release-every-other")
                                              or change == "release-only" and cycle == at):
                program.log.append((2, (0, 5)))
            handles.append(program.allocate(size, stream, pool))
            if after and slot == changed and (change in ("begin-release", "release-only")
                                              or change == "release-every-other" and cycle % 2):
                program.log.append((3, (0, 5)))
            if after and slot == changed and change == "empty":
                program.free(program.allocate(0))
        if after and change == "key-again":  # an allocation under a key that is live (``_malloc`` frees it first)
            _, ref = program.live[handles[changed]]
            program.log.append((0, id(ref), slots[changed], 0, DEFAULT_POOL, ref))
        if after and change == "old-block" and cycle == at:
            program.free(weights.pop())
        for slot, handle in enumerate(handles):
            if after and change == "lifetime" and slot == changed:
                keep.append(handle)  # lives one cycle longer from now on
                continue
            if change == "free-by-key" and after and slot == changed:
                program.free_by_key(handle)
                continue
            if change == "lifetime-by-key" and slot == changed:  # freed by key; from ``at`` on, a cycle later (at
                if after:  # ``at``, the block freed already: a free of nothing)
                    program.free_by_key(keep.pop() if keep else handles[slot] - len(slots))
                    keep.append(handle)
                else:
                    program.free_by_key(handle)
                continue
            program.free(handle)
        while len(keep) > 1:
            program.free(keep.pop(0))
    if change == "tail-like-the-cycle":  # a tail that starts as a cycle does, then differs
        handles = [program.allocate(size) for size in slots[:-1]] + [program.allocate(slots[-1] + 512)]
        for handle in handles:
            program.free(handle)
    return program


@pytest.mark.parametrize("change", CHANGES)
@pytest.mark.parametrize("seed", range(6))
def test_a_loop_that_changes_what_only_the_signatures_see_ends_where_the_event_by_event_play_ends(
        change: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cycle may change in the stream or the pool of one allocation, a lifetime, the way a block is freed, a pool
    begun and released, an empty request, a key taken again, a block from before the loop freed, or a tail that
    begins as a cycle, a pool begun or released without its pair (its use count and whether it is freeable are
    compared), a lifetime that changes where the block is freed by key: a repeat skipped across such a change would
    end elsewhere than the event-by-event play."""
    rng = random.Random(f"{change}-{seed}")
    program = _changing_loop(rng, change)
    _played_alike(rng, program, monkeypatch, change)


@pytest.mark.parametrize("kept", [1, 2])
@pytest.mark.parametrize("seed", range(4))
def test_a_loop_that_grows_each_cycle_ends_where_the_event_by_event_play_ends(
        kept: int, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cycle that keeps ``kept`` of its blocks for good (a cache that grows), freeing the rest or nothing: its
    allocations and its frees differ in number, and the model never repeats."""
    rng = random.Random(seed)
    program = _Program()
    slots = [rng.choice(SIZES) for _ in range(rng.randrange(kept, kept + 3))]
    for _ in range(rng.randrange(20, 40)):
        handles = [program.allocate(size) for size in slots]
        for handle in handles[kept:]:
            program.free(handle)
    _played_alike(rng, program, monkeypatch)


#: What comes before a steady loop in its window, or how the loop frees its blocks.
BEFORE = ("nothing", "frees-by-key", "a-pool-begun", "a-second-stream-first", "a-long-prelude")


def _steady_loop(rng: random.Random, before: str) -> tuple[_Program, int]:
    """A loop of 40 cycles whose blocks live to the next allocation, the cycle's end, or one or two cycles more,
    after what ``before`` names; and where its cycles begin."""
    program = _Program()
    if before == "a-pool-begun":  # a capture's pool begun at the window's start
        program.log.append((2, (0, 9)))
    for _ in range(3):  # weights, the first on a second stream: the window's first (stream, pool) is not the loop's
        program.allocate(512, 7 if before == "a-second-stream-first" else 0)
    if before == "a-long-prelude":  # 300 events that never repeat: the window's middle and first quarter land here
        for i in range(150):
            program.free(program.allocate(512 * (i + 1)))
    slots = [(rng.choice(SIZES), rng.choice((-1, 0, 0, 1, 2)), (0, DEFAULT_POOL)) for _ in range(rng.randrange(2, 8))]
    begin = len(program.log)
    _cycles(program, slots, 40, program.free_by_key if before == "frees-by-key" else program.free)
    return program, begin


@pytest.mark.parametrize("before", BEFORE)
@pytest.mark.parametrize("seed", range(4))
def test_a_steady_loop_in_one_window_is_played_a_few_cycles_and_skipped_the_rest(
        before: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exactness cases above hold also for a module that skips nothing; this one says the repeats ARE skipped
    where nothing keeps them from it: a steady loop of 40 cycles in one window, freeing its blocks through weak
    references or through ``(FREE, key)``, after a pool begun, weights on another stream, or a long prelude
    that never repeats, is played at most 12 cycles (a loop whose blocks live two cycles more repeats from its
    third or fourth cycle on), and ends where the event-by-event play ends."""
    program, begin = _steady_loop(random.Random(f"{before}-{seed}"), before)
    monkeypatch.setattr(allocator_cycles, "MIN_WINDOW", 64)
    played = []
    plain_play = CachingAllocator.play
    monkeypatch.setattr(CachingAllocator, "play", lambda self, log: (played.append(len(log)), plain_play(self, log))[1])
    skipping = CachingAllocator()
    skipping.log.extend(program.log)
    skipping.flush()
    cycle = (len(program.log) - begin) / 40
    assert sum(played) - begin <= 12 * cycle, f"{sum(played) - begin} of {len(program.log) - begin} events played"
    one_by_one = CachingAllocator()
    plain_play(one_by_one, program.log)
    assert _state(skipping) == _state(one_by_one)


@pytest.mark.parametrize(("change", "seed"), [("pool", 24), ("empty", 16), ("old-block", 32), ("tail-like-the-cycle", 25),
                                              ("begin-release", 36)])
def test_a_changing_loop_cut_into_windows_where_only_the_first_event_or_the_pool_tells_a_cycle_apart(
        change: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Changing loops as above, at seeds whose windows begin one event before a run (the run found from the middle
    must stop there, not take the window's first event in), or whose change is only an allocation's pool on the
    window's first stream (its signature must name the pool): the six seeds above meet neither."""
    rng = random.Random(f"{change}-{seed}")
    program = _changing_loop(rng, change)
    _played_alike(rng, program, monkeypatch, change)


def test_a_loop_that_only_allocates_ends_where_the_event_by_event_play_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """A window of 100 allocations of one size and no free (a cache filled): the cycle frees no block, so there is
    no run's oldest block to take shapes from, and the window is played as it comes."""
    program = _Program()
    for _ in range(100):
        program.allocate(512)
    monkeypatch.setattr(allocator_cycles, "MIN_WINDOW", 64)
    skipping, one_by_one = CachingAllocator(), CachingAllocator()
    skipping.log.extend(program.log)
    skipping.flush()
    one_by_one.play(program.log)
    assert _state(skipping) == _state(one_by_one)
