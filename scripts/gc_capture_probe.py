"""A pytest plugin that watches Python's cyclic collector around CUDA graph captures (issue 8 evidence).

Load with ``-p scripts.gc_capture_probe``. ``GC_PROBE=observe`` (default) records every collection that
starts while a ``torch.cuda.CUDAGraph`` capture is open, with the test it happened in and how many
objects it freed; ``GC_PROBE=off`` disables the collector for the session; ``GC_PROBE=collect`` runs
``gc.collect()`` before every test. ``GC_PROBE_OUT`` names the JSON file written at the end.
"""

from __future__ import annotations

import gc
import json
import os

import pytest

_state = {"open": 0, "test": "", "events": [], "pending": None}


def _patch_cuda_graph() -> None:
    import torch

    cls = torch.cuda.CUDAGraph
    begin, end = cls.capture_begin, cls.capture_end

    def capture_begin(self, *a, **k):  # type: ignore[no-untyped-def]
        out = begin(self, *a, **k)
        _state["open"] += 1
        return out

    def capture_end(self, *a, **k):  # type: ignore[no-untyped-def]
        try:
            return end(self, *a, **k)
        finally:
            _state["open"] = max(0, _state["open"] - 1)

    cls.capture_begin, cls.capture_end = capture_begin, capture_end


def _on_gc(phase: str, info: dict) -> None:
    if phase == "start" and _state["open"]:
        _state["pending"] = {"test": _state["test"], "generation": info["generation"]}
    elif phase == "stop" and _state["pending"] is not None:
        event, _state["pending"] = _state["pending"], None
        event["collected"] = info["collected"]
        _state["events"].append(event)


def pytest_configure(config: pytest.Config) -> None:
    mode = os.environ.get("GC_PROBE", "observe")
    _patch_cuda_graph()
    if mode == "off":
        gc.disable()
    gc.callbacks.append(_on_gc)


def pytest_runtest_setup(item: pytest.Item) -> None:
    _state["test"] = item.nodeid
    if os.environ.get("GC_PROBE") == "collect":
        gc.collect()


def pytest_unconfigure(config: pytest.Config) -> None:
    out = os.environ.get("GC_PROBE_OUT")
    events = _state["events"]
    freed = [e for e in events if e["collected"]]
    print(f"\ngc-probe: {len(events)} collections during an open capture, {len(freed)} of them freed objects")
    for e in freed[:20]:
        print(f"gc-probe:   {e['test']} gen={e['generation']} collected={e['collected']}")
    if out:
        with open(out, "w") as fh:
            json.dump({"mode": os.environ.get("GC_PROBE", "observe"), "events": events}, fh, indent=1)
