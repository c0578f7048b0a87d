"""The allocator log's repeats, played once: a loop's steady state costs the model a few cycles a window.

An eager loop (a decode step, a training step) asks the caching allocator for the same blocks in the same
order every iteration, and frees them in the same order. The model (``allocator.CachingAllocator``) plays
its log event by event, about a microsecond each in Python, so a forward of 40 events pays some 40 us for
it. This module plays such a log exactly, at the cost of a pass over its events and a cycle or a few:

1. **Signatures.** Each event of the window becomes a value that says what it does without naming a key:
   an allocation its size (with its stream and pool where they differ from the window's first), a free how
   many allocations ago its block was made (``r``: the block whose ``serial`` is the count now minus ``r``),
   a free of no live block ``None``; anything else (a pool begun or released, a key taken again) a value
   equal to nothing, which no cycle can span.
2. **A cycle.** The smallest period ``p`` with which a long run of the window repeats (``signature[i] ==
   signature[i + p]`` for every ``i`` of the run), looked for around the window's middle, then its quarters
   (each later place of the probe's signature is a period to try); the run must hold four whole cycles.
   ``list.index`` and list comparisons find it (they run in C).
3. **Cycles played until the model repeats.** From the run's start, cycle after cycle is played as usual
   (at most ``LOOK``), the model's shape taken at each boundary: every block of every segment (address,
   size, request) and, for an allocated one, WHICH allocation holds it, said relative to now for a block made
   at or after the oldest block the run frees (``first``), by its number for an older one (which the run never
   frees), with the current figures. A shape seen ``q`` cycles earlier means, with equal signatures, that every
   later group of ``q`` cycles does what the last did: the same blocks chosen, split and merged, for holders
   the same distance back. (``q`` is 1 for most loops, 2 for a double buffer, more while a loop's first cycles
   still reserve segments.)
4. **The rest skipped.** ``g`` further groups of ``q`` cycles move the cumulative figures on by ``g`` times the
   last group's change (allocations, frees, bytes, counters); the current figures and the peaks stay (the same
   excursions from the same figures); each block the run holds passes to the allocation ``g * q`` cycles later
   (its key, its storage's weak reference, its number). What follows the last whole group is played as usual.

Worked example (``bench/bench_allocator_log.py --hidden 512``): a window of 2,040 events, 51 forwards of 40 (20
allocations, 20 frees): signatures for all, one forward played, the shapes before and after it equal, 50 forwards
skipped in one step; about 0.3 us an event in all, where the play alone was about 1.1.
``tests/torch_cuda/test_a_loops_repeated_allocations_are_played_once_with_the_same_figures_blocks_and_keys.py``
plays random loops both ways and compares every figure, every block, every key and every owner.

Cost where nothing repeats: the signature pass and the search, about 0.2 us an event on top of the play's 1.25
(``bench/bench_allocator_log.py``'s no-repeat figure: 2,048 random events).

Not attempted (the window is played event by event): a window shorter than ``MIN_WINDOW`` (a figure read
soon after the last one), a model with a memory limit or a memory history (each event is observed there),
and a model of more blocks than a quarter of the window's events (taking its shape would cost more than
the play it saves).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from seam.torch_cuda.allocator_events import ALLOC, FREE

if TYPE_CHECKING:
    from seam.torch_cuda.allocator import CachingAllocator

_NOWHERE = object()
#: Windows shorter than this are played event by event.
MIN_WINDOW = 256
#: The longest cycle looked for, in events.
MAX_PERIOD = 4096
#: The most cycles played while waiting for the model to repeat (a loop's first cycles still reserve segments;
#: a double buffer repeats every second cycle).
LOOK = 12


def play(alloc: "CachingAllocator", log: list[Any]) -> None:
    """Play ``log`` into ``alloc`` as ``alloc.play`` would, the whole repeats of one cycle in one step."""
    found = _cycle(alloc, log)
    if found is None:
        alloc.play(log)
        return
    sigs, made, start, period, whole = found
    base = alloc.serial
    allocations = sum(1 for sig in sigs[start:start + period] if sig is not None and not _is_free(sig))
    first = _oldest_freed(sigs[start:start + period],
                          base + sum(1 for event in log[:start] if type(event) is tuple and event[0] == ALLOC))
    alloc.play(log[:start])
    at = start
    if first is not None and allocations:
        seen: dict[tuple[Any, ...], tuple[int, list[int]]] = {}  # by shape: (cycles played then, cumulative figures)
        for done in range(min(whole, LOOK) + 1):
            shape = _shape(alloc, first)
            if shape in seen:  # the model repeats every ``done - before`` cycles from here on
                before, figures = seen[shape]
                groups = (whole - done) // (done - before)
                shift = groups * (done - before) * allocations
                if groups:
                    alloc.stats.advance(figures, alloc.stats.cumulative(), groups)
                    _pass_on(alloc, first, shift, base, made)
                    alloc.serial += shift
                    at += groups * (done - before) * period
                break
            if done == whole:
                break
            seen[shape] = (done, alloc.stats.cumulative())
            alloc.play(log[at:at + period])
            at += period
    alloc.play(log[at:])


def _signatures(alloc: "CachingAllocator", log: list[Any]) -> tuple[list[Any], list[tuple[Any, ...]]]:
    """Each event's signature, and the window's allocation events in order. An allocation's signature is its size
    (a positive int), with its stream and pool (a tuple) where they differ from the window's first; a free's is
    ``-1 - r`` (a negative int) for a block made ``r`` allocations ago, ``None`` for no live block; any other
    event's a new ``object()``, equal to nothing, which no cycle can span. One pass, written for speed: it runs
    for every event of every window this module plays."""
    serial = alloc.serial
    made: dict[Any, int] = {}  # the window's allocations still held, by key
    take = made.pop
    gone: set[Any] = set()  # keys of blocks from before the window that the window freed
    active = alloc.active
    sigs: list[Any] = []
    push = sigs.append
    allocations: list[tuple[Any, ...]] = []
    note = allocations.append
    stream = pool = _NOWHERE
    for event in log:
        if type(event) is tuple:
            kind = event[0]
            if kind == ALLOC:
                key = event[1]
                serial += 1
                note(event)
                if key in made or event[2] <= 0 or (key in active and key not in gone):
                    push(object())  # a key taken again (``_malloc`` frees it first) or an empty request
                    take(key, None)
                elif event[3] == stream and event[4] == pool:
                    made[key] = serial
                    push(event[2])
                else:
                    made[key] = serial
                    if stream is _NOWHERE:
                        stream, pool = event[3], event[4]
                        push(event[2])
                    else:
                        push((event[2], event[3], event[4]))
                continue
            if kind != FREE:
                push(object())  # a pool begun or released
                continue
            key = event[1]
        else:  # a storage's death: its weak reference
            key = id(event)
        held = take(key, None)
        if held is None and key not in gone:
            block = active.get(key)
            if block is not None:
                gone.add(key)
                held = block.serial
        push(None if held is None else held - serial - 1)
    return sigs, allocations


def _cycle(alloc: "CachingAllocator", log: list[Any]) -> tuple[list[Any], list[tuple[Any, ...]], int, int, int] | None:
    """(signatures, allocations, start, period, whole cycles) of a run of the window that repeats at least four
    times, found around its middle or its quarters, if the model is small enough to compare; else None."""
    if _blocks(alloc) * 4 > len(log):
        return None
    sigs, made = _signatures(alloc, log)
    count = len(sigs)
    longest = min(MAX_PERIOD, count // 4)
    for probe in (count // 2, count // 4, 3 * count // 4):
        value, at = sigs[probe], probe
        while True:  # each later place of the probe's signature is a period to try (``list.index`` finds it in C)
            try:
                at = sigs.index(value, at + 1, probe + longest + 1)
            except ValueError:
                break
            period = at - probe
            near = probe + min(8, period)
            if near + period > count or sigs[probe:near] != sigs[at:near + period]:
                continue
            start, end = _run(sigs, probe, period)
            if (end - start) // period >= 4:
                return sigs, made, start, period, (end - start) // period
    return None


def _run(sigs: list[Any], probe: int, period: int) -> tuple[int, int]:
    """The run around ``probe`` that repeats with ``period``: [start, end) with ``sigs[i] == sigs[i - period]``
    wherever both lie in it. Each side by galloping then bisection (the repeat holds up to a point iff it holds
    up to every nearer one), the comparisons of list slices running in C: a short run costs a few short
    comparisons, a window that repeats from end to end one long comparison a side."""
    count = len(sigs)

    def repeats(a: int, b: int) -> bool:
        return sigs[a:b] == sigs[a + period:b + period]

    reach, step = probe, 16  # to the left: the earliest ``reach`` with repeats(reach, probe)
    while reach > 0 and repeats(max(0, reach - step), reach):
        reach, step = max(0, reach - step), step * 2
    if reach > 0:  # it fails within ``step`` of ``reach``: bisect there
        low, high = max(0, reach - step), reach
        while low < high:
            mid = (low + high) // 2
            if repeats(mid, reach):
                high = mid
            else:
                low = mid + 1
        reach = low
    start, reach, step = reach, probe, 16  # to the right: the latest ``reach`` with repeats(probe, reach)
    last = count - period
    while reach < last and repeats(reach, min(last, reach + step)):
        reach, step = min(last, reach + step), step * 2
    if reach < last:
        low, high = reach, min(last, reach + step)
        while low < high:
            mid = (low + high + 1) // 2
            if repeats(reach, mid):
                low = mid
            else:
                high = mid - 1
        reach = low
    return start, reach + period


def _is_free(sig: Any) -> bool:
    return type(sig) is int and sig < 0


def _blocks(alloc: "CachingAllocator") -> int:
    pools = [alloc.small, alloc.large, *(p for private in alloc.private.values() for p in (private.small, private.large))]
    return len(alloc.active) + sum(len(pool.free) for pool in pools)


def _oldest_freed(cycle: list[Any], serial: int) -> int | None:
    """The number of the oldest allocation a cycle frees (None if it frees none); ``serial``: the count at its
    start."""
    oldest = None
    for sig in cycle:
        if sig is None:
            continue
        if _is_free(sig):  # a free of the block made ``-1 - sig`` allocations ago
            held = serial + 1 + sig
            oldest = held if oldest is None else min(oldest, held)
        else:
            serial += 1
    return oldest


def _shape(alloc: "CachingAllocator", first: int) -> tuple[tuple[Any, ...], ...]:
    """Every block of every segment, and which allocation holds it: relative to now for a block made at or after
    ``first``, by its number (negative) for an older one; with the current figures."""
    now = alloc.serial
    out: list[tuple[Any, ...]] = [alloc.stats.current()]
    for head in alloc.segments:
        out.append((id(head.pool), head.stream))
        block = head
        while block is not None:
            holder = None
            if block.allocated:
                holder = now - block.serial if block.serial >= first else -1 - block.serial
            out.append((block.address, block.size, block.requested, holder))
            block = block.next
    return tuple(out)


def _held_in_run(alloc: "CachingAllocator", first: int) -> list[Any]:
    return [block for block in alloc.active.values() if block.serial >= first]


def _pass_on(alloc: "CachingAllocator", first: int, shift: int, base: int, allocations: list[tuple[Any, ...]]) -> None:
    """Each block the run holds passes to the allocation ``shift`` later: its key, its owner, its number. That
    allocation is in this window: a block the run holds at a boundary whose shape an earlier boundary had was
    made after that earlier boundary (the same block would be older by the allocations between them)."""
    held = _held_in_run(alloc, first)
    for block in held:
        del alloc.active[block.key]
    for block in held:
        block.serial += shift
        event = allocations[block.serial - base - 1]
        block.key, block.owner = event[1], event[5]
        alloc.active[block.key] = block
        alloc.placed(block)
