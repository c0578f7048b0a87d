"""``torch.cuda.memory._record_memory_history`` and ``_snapshot`` on the emulated device.

torch's Python functions call two functions of its CUDA build's ``torch._C``, which a CPU-only build lacks;
these stand in for them, over the caching allocator's model (``allocator.py``). What they give is the
H200's (torch 2.11, ``tests/fidelity/cuda_corpus.py``, class ``memory history``):

- ``_snapshot()`` is ``{"segments", "device_traces", "allocator_settings", "external_annotations"}``;
  ``segments`` is ``memory_snapshot()``; ``device_traces`` one list for the one device;
- while recording, every allocation adds ``segment_alloc`` (a new segment) then ``alloc`` (the requested
  size), a free ``free_requested`` then ``free_completed``, ``empty_cache`` a ``segment_free`` per released
  segment, and a snapshot a ``snapshot`` entry (the allocated bytes) AFTER it is taken;
- the trace keeps the last ``max_entries``; ``enabled=None`` stops recording and drops the trace;
  ``clear_history=True`` drops it too.

The entries' and blocks' stack frames are ``memory_frames.py``'s (under the context and stacks asked for); their
addresses are the model's.
"""

from __future__ import annotations

import collections
import sys
from typing import Any

from seam.torch_cuda import memory_frames
from seam.torch_cuda.runtime import runtime

#: What the H200 reported as ``allocator_settings`` (torch 2.11, no ``PYTORCH_CUDA_ALLOC_CONF``).
ALLOCATOR_SETTINGS: dict[str, Any] = {
    "PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1, "garbage_collection_threshold": 0.0,
    "expandable_segments": False, "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
    "pinned_use_cuda_host_register": False, "graph_capture_record_stream_reuse": False,
    "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)},
}


def _record(enabled: bool, trace_entries: int, context: str | None, stacks: str, clear_history: bool) -> None:
    allocator = runtime().allocator
    allocator.flush()  # what happened before the call is not recorded, nor with the frames asked for now
    if not enabled:
        allocator.trace = None
        allocator.set_context(None, stacks)
        return
    kept = () if clear_history or allocator.trace is None else allocator.trace
    allocator.trace = collections.deque(kept, maxlen=max(1, int(trace_entries)))
    allocator.set_context(context, stacks)


def record_memory_history(enabled: Any = "all", context: Any = "all", stacks: str = "all",
                          max_entries: int = sys.maxsize, clear_history: bool = False, *rest: Any, **kwargs: Any) -> None:
    """``torch._C._cuda_record_memory_history``: ``enabled`` None stops (and drops the trace), ``"state"`` keeps
    one entry of it, ``"all"`` the last ``max_entries``; ``context`` and ``stacks`` say which frames are kept
    (``memory_frames.py``); what torch does not know it refuses in its words."""
    if enabled is not None and enabled not in ("state", "all"):
        raise RuntimeError("expected state to be 'state', 'all', or None")
    memory_frames.check(context, stacks)
    _record(enabled is not None, max_entries if enabled == "all" else 1, context, stacks, bool(clear_history))


def record_memory_history_legacy(enabled: bool, record_context: bool = True, trace_alloc_max_entries: int = 1,
                                 trace_alloc_record_context: bool = False, record_context_cpp: bool = False,
                                 clear_history: bool = False, *rest: Any, **kwargs: Any) -> None:
    """``torch._C._cuda_record_memory_history_legacy`` (``_record_memory_history(True, ...)``): frames of the
    trace's entries with ``trace_alloc_record_context``, else of the live blocks with ``record_context``."""
    context = "alloc" if trace_alloc_record_context else "state" if record_context else None
    _record(bool(enabled), trace_alloc_max_entries, context, "all" if record_context_cpp else "python", clear_history)


def allocation_traceback(data_ptr: int) -> list[dict[str, Any]] | None:
    """``torch._C._cuda_allocationTraceback`` (torch 2.13's ``torch.cuda.memory._allocation_traceback``): the frames
    recorded for the live allocation that starts at ``data_ptr``; None when no live block starts there or none were
    recorded (``context=None``, or recording never on when it was made)."""
    block = runtime().allocator.read().block_at(int(data_ptr))
    return list(block.frames) if block is not None and block.frames else None


def memory_snapshot(mempool_id: Any = None) -> dict[str, Any]:
    """``torch._C._cuda_memorySnapshot``: the segments (of one pool when ``mempool_id`` names one that is not
    the default's), the trace, the settings; a ``snapshot`` entry joins the trace after it is taken."""
    allocator = runtime().allocator
    segments = allocator.snapshot()
    if mempool_id is not None and tuple(mempool_id[:2]) != (0, 0):
        segments = [s for s in segments if tuple(s["segment_pool_id"]) == tuple(mempool_id[:2])]
    out = {"segments": segments, "device_traces": [list(allocator.trace or ())],
           "allocator_settings": dict(ALLOCATOR_SETTINGS), "external_annotations": []}
    if allocator.trace is not None:
        allocator.record("snapshot", 0, allocator.stats.arrays["allocated_bytes"][0][0], 0)
    return out
