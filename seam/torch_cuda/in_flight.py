"""Graph replays in flight: a replay is issued to its stream and runs when the device next has to act.

On a GPU ``replay()`` launches the graph and returns; its kernels run while the host goes on. Two replays
launched one after the other on streams that nothing orders run CONCURRENTLY, and when their graphs share
a memory pool (``pool=g0.pool()``, one ``graph_pool_handle()``) each overwrites the other's intermediates:
PyTorch's ``test_graph_concurrent_replay`` expects both results corrupted then, and intact when the pools
are separate. The emulator keeps the last replays issued in flight and runs them when anything else
happens on the device: any operation (``dispatch``), a stream or event wait, query or synchronize, a
figure read, a capture, a reset, leaving the emulation, a read torch makes with no tensor operation
(``settle``). Replays issued back to back on
DIFFERENT streams, with nothing between them, run interleaved, one recorded operation of each in turn:
separate memory gives the sequential result, shared memory the corruption a GPU shows. A replay on a
stream that already has one in flight runs after those in flight, as in-order streams run it; one whose
graph draws random numbers runs at once (its generator's offsets are set at launch).

Not modelled: an eager operation racing a replay on another stream (it runs after the replay).
"""

from __future__ import annotations

import itertools
from typing import Any

from torch.utils._python_dispatch import _disable_current_modes

from seam.emulator import as_launched


class Replay:
    """One replay in flight: its stream and its graph (``seam.emulator.EmulatedGraph``)."""

    __slots__ = ("stream", "graph")

    def __init__(self, stream: int, graph: Any) -> None:
        self.stream, self.graph = stream, graph


def issue(rt: Any, stream: int, graph: Any, draws: bool) -> None:
    """Launch ``graph`` on ``stream``: it runs at the next ``settle``, beside the replays in flight on other
    streams; after those on its own stream. A replay that ``draws`` random numbers runs at once (its draws read
    the generator's offsets of its launch, which the next seed or draw would move)."""
    if rt.in_flight and (draws or any(r.stream == stream for r in rt.in_flight)):
        settle(rt)
    rt.in_flight.append(Replay(stream, graph))
    if draws:
        settle(rt)


def settle(rt: Any) -> None:
    """Run every replay in flight: one alone in order, several interleaved an operation each in turn."""
    if not rt.in_flight:
        return
    batch, rt.in_flight = rt.in_flight, []
    # ``as_launched`` (inference mode, no autocast) around the whole batch: each replay's steps enter it too
    # (``EmulatedGraph.steps``), and interleaved generators leave it in another order than they entered it; nested
    # in this one, each leaves it on, and this one restores the caller's modes
    with _disable_current_modes(), as_launched():
        if len(batch) == 1:
            batch[0].graph.replay()
            return
        runs = [r.graph.steps() for r in batch]
        try:
            for _ in itertools.zip_longest(*runs):
                pass
        finally:
            for run in reversed(runs):  # an unfinished one (an operation raised) leaves its grad mode now
                run.close()


def settle_before_drop(rt: Any, graph: Any) -> None:
    """A graph about to go (reset, or its ``CUDAGraph`` dropped): its launched replays run first, as CUDA
    finishes a launched graph whose executable is destroyed."""
    if any(r.graph is graph for r in rt.in_flight):
        settle(rt)
