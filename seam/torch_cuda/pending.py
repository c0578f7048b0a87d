"""Work pending on the emulated device's streams: what ``torch.cuda._sleep`` queues, and the frees it holds back.

On a GPU ``torch.cuda._sleep(cycles)`` queues a spin kernel: its stream is busy until the kernel ends, an event
recorded behind it is not complete (``query()`` says False), a stream that waits on it inherits the wait, a
synchronize waits for it, and ``elapsed_time`` across it is its length. The caching allocator holds back the free
of a block that ``record_stream`` gave another stream until the work that stream had queued at the free is done
(``process_events`` at a later allocation). PyTorch's own tests lean on all of it (``test_events``,
``test_record_stream``, ``torch.testing``'s ``get_cycles_per_ms``).

The emulated device runs every operation when it is called, so its values never wait; what is modelled is the TIME
a sleep takes: ``_sleep`` makes its stream busy for ``cycles / CYCLES_PER_MS`` milliseconds of wall time from when
its earlier sleeps end, and the queries, waits, synchronizes and timings read that. A storage ``record_stream`` gave
a stream (once any sleep was queued) is held here after its last tensor goes, until every such stream's work queued
by then is done; then it dies, and the allocator model frees its block (``release_due``, before the next operation).
A blocking copy between host and device and a host read of a device value (``item()``) wait for the current
stream's queued work, as CUDA's synchronous copies do; a non-blocking one does not (``dispatch._copy_across``).
Not modelled: a sleep inside a capture (it queues nothing, as before), an eager operation's own duration.
"""

from __future__ import annotations

import time
from typing import Any

import torch

#: The emulated device's cycles per millisecond: the H200's SM clock, 1980 MHz.
CYCLES_PER_MS = 1_980_000
#: When each stream's queued sleeps end (``time.perf_counter()`` seconds), by stream id.
BUSY: dict[int, float] = {}
#: Storages whose free ``record_stream`` holds back: [storage, the streams it was recorded on, when the work queued
#: on them at its free ends (None while a tensor still uses it)].
DEFERRED: list[list[Any]] = []
_use_count = torch._C._storage_Use_Count


def reset() -> None:
    """A fresh device: nothing queued, nothing held."""
    BUSY.clear()
    DEFERRED.clear()


def ends(stream_id: int) -> float:
    """When the work queued on the stream ends (0: none was ever queued)."""
    return BUSY.get(stream_id, 0.0)


def queue_sleep(stream_id: int, cycles: int) -> None:
    """``torch.cuda._sleep(cycles)`` on the stream: busy for that long after what it already had queued."""
    start = max(time.perf_counter(), ends(stream_id))
    BUSY[stream_id] = start + max(0, int(cycles)) / CYCLES_PER_MS / 1000.0


def ends_all(stream_ids: Any) -> float:
    """When the work queued on all these streams ends (0: none was ever queued)."""
    return max((ends(s) for s in stream_ids), default=0.0)


def wait_for(stream_id: int) -> None:
    """A host wait for the work queued on the stream (a blocking copy, a synchronize)."""
    wait_until(ends(stream_id))


def inherit(waiter_id: int, end: float) -> None:
    """A stream waits on work that ends at ``end``: its later work ends no earlier."""
    if end > ends(waiter_id) and end > time.perf_counter():
        BUSY[waiter_id] = end


def wait_until(end: float) -> None:
    """A host wait: block until ``end``."""
    delay = end - time.perf_counter()
    if delay > 0:
        time.sleep(delay)


def device_end() -> float:
    """When all the device's queued work ends."""
    return max(BUSY.values(), default=0.0)


def note_stream_use(storage: torch.UntypedStorage, stream_id: int) -> None:
    """``record_stream``: the storage's block is not free again until the stream's work queued at its free is done.
    Only once a sleep was queued: until then every stream's work is done when it is asked."""
    if not BUSY:
        return
    for entry in DEFERRED:
        if entry[0] is storage:
            entry[1].add(stream_id)
            return
    DEFERRED.append([storage, {stream_id}, None])


def release_due() -> None:
    """Let the held storages go whose last tensor went and whose streams' work queued then is done (their blocks
    are freed before the operation under way allocates: ``DeviceMode`` calls this first)."""
    now = time.perf_counter()
    for entry in list(DEFERRED):
        storage, streams, end = entry
        if _use_count(storage._cdata) > 1:  # a tensor still uses it (the one count left is this list's)
            continue
        if end is None:
            end = entry[2] = ends_all(streams)
        if now >= end:
            DEFERRED.remove(entry)
        del storage, entry
