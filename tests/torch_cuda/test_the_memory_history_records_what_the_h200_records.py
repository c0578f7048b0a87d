"""``torch.cuda.memory._record_memory_history`` and ``_snapshot()`` on both arms, as the H200 gives them
(torch 2.11; ``tests/fidelity/cuda_corpus.py`` class ``memory history``): on a CPU-only torch both called
functions its CUDA build alone has, and failed with an AttributeError. Sizes are exact; addresses are the
emulated device's own."""

from __future__ import annotations

import gc

import pytest
import torch

# The caching allocator's figures and words: on the cuda arm in a process of their own (conftest.py).
pytestmark = pytest.mark.own_process


def _trace() -> list[tuple[str, int]]:
    return [(e["action"], e["size"]) for e in torch.cuda.memory._snapshot()["device_traces"][0]]


def test_the_history_records_segments_allocations_and_frees(torch_cuda: str) -> None:
    # Which requests take a new segment depends on the blocks earlier cases left (the cuda arm shares one
    # process): the exact sequence in a fresh interpreter is the corpus's; here, what holds in any process.
    torch.cuda.synchronize()
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.memory._record_memory_history(max_entries=1000, clear_history=True)
    try:
        a = torch.ones(1000, device="cuda")
        b = torch.ones(300000, device="cuda")
        del a
        snap = torch.cuda.memory._snapshot()
        assert sorted(snap) == ["allocator_settings", "device_traces", "external_annotations", "segments"]
        entries = [(e["action"], e["size"]) for e in snap["device_traces"][0]]
        assert [e for e in entries if not e[0].startswith("segment_")] == [
            ("alloc", 4000), ("alloc", 1200000), ("free_requested", 4000), ("free_completed", 4000)]
        assert {size for action, size in entries if action == "segment_alloc"} <= {2097152, 20971520}
        assert sorted(snap["device_traces"][0][0]) == ["action", "addr", "compile_context", "frames", "size", "stream",
                                                       "time_us", "user_metadata"]
        assert snap["segments"] == torch.cuda.memory_snapshot()
        del b
        gc.collect()
        torch.cuda.empty_cache()
        after = _trace()
        # each snapshot taken while recording joins the trace (the allocated bytes then), then b's frees
        frees = after.index(("free_requested", 1200000))
        assert after[frees + 1] == ("free_completed", 1200000)
        assert after[frees - 1][0] == "snapshot" and after[frees - 1][1] >= 1200128
        assert {action for action, _ in after[frees + 2:]} <= {"segment_free"}
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    assert _trace() == []  # stopping drops the trace


def test_the_history_keeps_the_last_max_entries(torch_cuda: str) -> None:
    torch.cuda.memory._record_memory_history(max_entries=3, clear_history=True)
    try:
        for _ in range(4):
            t = torch.ones(10, device="cuda")
            del t
        assert _trace() == [("alloc", 40), ("free_requested", 40), ("free_completed", 40)]
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
