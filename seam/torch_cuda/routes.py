"""Which pool a new device block goes to while pools are recorded to: CUDA's ``captures_underway``, emulated.

CUDA's caching allocator keeps, per device, a list of (pool, filter) entries in begin order. A new block goes to
the pool of the LAST begun entry whose filter takes the allocating stream, else to the default pool (``get_pool``
searches the list from its end: a nested ``use_mem_pool`` allocates in the inner pool, as the H200 gives the
corpus' ``nested_uses_of_two_mempools_route_each_allocation_to_the_innermost``). Entries come from:

- a capture's begin (``CUDAGraph.capture_begin``): the streams that are part of that capture; an end CUDA
  accepts removes the first entry of its pool; a refused one removes nothing (torch's ``capture_end`` raises at
  ``cudaStreamEndCapture`` before it ends the routing), so the capture's entry stays, taking no stream, for the
  rest of the process or until ``_cuda_endAllocateToPool`` ends it: the pool is refused to later begins, and
  the allocator releases no default-pool segment while any entry is there (``CachingAllocator.release_cached``);
- ``torch._C._cuda_beginAllocateCurrentThreadToPool`` (``torch.cuda.use_mem_pool``): the calling thread;
- ``torch._C._cuda_beginAllocateCurrentStreamToPool``: the stream current when it is called;
- ``torch._C._cuda_beginAllocateToPool``: every stream.

A begin first takes a use of the pool, then is refused if an entry of that pool exists ("already recording to
mempool_id": the use stays taken). ``torch._C._cuda_endAllocateToPool(device, pool)`` removes the first entry of
that pool (searched from the list's start), whoever made it, and is refused where there is none. Engines lean on
this: SGLang's and vLLM's symmetric-memory allocators, inside a capture, end the graph's entry, allocate in their
own pool, and begin a thread entry of the graph's pool again, which the capture's end then removes.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import torch

from seam.torch_cuda.allocator import DEFAULT_POOL
from seam.torch_cuda.cuda_errors import NOT_RECORDING, torch_error
from seam.torch_cuda.runtime import runtime

if TYPE_CHECKING:
    from seam.torch_cuda.capture import OpenCapture
    from seam.torch_cuda.runtime import Runtime
    from seam.torch_cuda.streams import Stream


#: The stream id of an entry that takes no stream (no emulated stream has it).
NO_STREAM = -1


class Route:
    """One entry: its pool, and what its filter takes (a capture's streams, one thread, one stream, or all)."""

    __slots__ = ("pool", "capture", "thread", "stream_id")

    def __init__(self, pool: tuple[int, int], capture: "OpenCapture | None" = None, thread: int | None = None,
                 stream_id: int | None = None) -> None:
        self.pool, self.capture, self.thread, self.stream_id = pool, capture, thread, stream_id

    def takes(self, rt: "Runtime", stream: "Stream") -> bool:
        if self.capture is not None:  # the streams that are part of the capture, while it is open
            return self.capture in rt.captures and self.capture.ledger.captures(stream._id)
        if self.thread is not None:
            return threading.get_ident() == self.thread
        return self.stream_id is None or self.stream_id == stream._id


def pool_for(rt: "Runtime", stream: "Stream") -> tuple[int, int]:
    """The pool a new block on ``stream`` goes to (CUDA's ``get_pool``: the last begun entry that takes it)."""
    for route in reversed(rt.routes):
        if route.takes(rt, stream):
            return route.pool
    return DEFAULT_POOL


def take_pool(rt: "Runtime", pool: tuple[int, int], what: str) -> None:
    """The first half of CUDA's ``beginAllocateToPool``: a use of ``pool`` taken, then refused if the pool is
    recorded to (the use stays taken: a refused ``capture_begin`` or ``use_mem_pool`` keeps it)."""
    rt.allocator.begin_pool(pool)
    rt.refuse_recorded(pool, what)


def begin(rt: "Runtime", route: Route, what: str) -> None:
    """CUDA's ``beginAllocateToPool``: the pool taken (``take_pool``), then ``route`` entered."""
    take_pool(rt, route.pool, what)
    rt.routes.append(route)


def end(rt: "Runtime", pool: tuple[int, int], *, missing_ok: bool = False) -> None:
    """CUDA's ``endAllocateToPool``: the first entry of ``pool`` removed; refused where there is none, unless
    ``missing_ok`` (a capture's end: none left, none to end)."""
    for i, route in enumerate(rt.routes):
        if route.pool == pool:
            del rt.routes[i]
            return
    if not missing_ok:
        raise torch_error(NOT_RECORDING, f"endAllocateToPool of pool {pool}, which nothing records to")


def left_by_a_refused_end(rt: "Runtime", capture: "OpenCapture") -> None:
    """A capture CUDA refused at its end keeps its entry (torch's ``capture_end`` raises before it ends the
    routing): the entry takes no stream any more (none is part of the capture) and lets go of the capture."""
    for route in rt.routes:
        if route.capture is capture:
            route.capture, route.stream_id = None, NO_STREAM


# -- torch._C's functions ----------------------------------------------------------------------------------
def begin_allocate_to_pool(device: int, pool_id: Any) -> None:
    """``torch._C._cuda_beginAllocateToPool``: every stream's new blocks go to ``pool_id``."""
    begin(runtime(), Route(tuple(pool_id)), "beginAllocateToPool")


def begin_allocate_current_thread_to_pool(device: int, pool_id: Any) -> None:
    """``torch._C._cuda_beginAllocateCurrentThreadToPool`` (``use_mem_pool``): this thread's new blocks."""
    begin(runtime(), Route(tuple(pool_id), thread=threading.get_ident()), "use_mem_pool")


def begin_allocate_current_stream_to_pool(device: int, pool_id: Any) -> None:
    """``torch._C._cuda_beginAllocateCurrentStreamToPool``: the current stream's new blocks."""
    rt = runtime()
    begin(rt, Route(tuple(pool_id), stream_id=rt.current_stream()._id), "beginAllocateCurrentStreamToPool")


def end_allocate_to_pool(device: int, pool_id: Any) -> None:
    """``torch._C._cuda_endAllocateToPool``."""
    end(runtime(), tuple(pool_id))


def patches() -> list[tuple[Any, str, Any]]:
    """What ``emulate_cuda()`` puts in place (``install.py``): the four functions CUDA builds of torch 2.11 to 2.13
    have (2.13's ``torch/_C/__init__.pyi`` declares no ``_cuda_endAllocateCurrentStreamToPool``, which older torch
    had: not emulated)."""
    functions = {"_cuda_beginAllocateToPool": begin_allocate_to_pool,
                 "_cuda_beginAllocateCurrentThreadToPool": begin_allocate_current_thread_to_pool,
                 "_cuda_beginAllocateCurrentStreamToPool": begin_allocate_current_stream_to_pool,
                 "_cuda_endAllocateToPool": end_allocate_to_pool}
    out: list[tuple[Any, str, Any]] = [(torch._C, name, value) for name, value in functions.items()]
    out.extend((torch.cuda.memory, name, value) for name, value in functions.items() if hasattr(torch.cuda.memory, name))
    return out
