"""The inert scope: capture off (``SEAM_CUDAGRAPH=0``) or impossible (``EagerBackend``).

``SEAM_CUDAGRAPH`` is read ONCE per process, so the switch is checked in a child process.
"""

from __future__ import annotations

import json

import torch

from seam import BreakableGraph, CaptureMode, EagerBackend, GraphCaptureScope, get_graph_break_stats

from .conftest import run_child

CHILD = """
    import json, torch
    from seam import *
    b = EmulatedBackend(); q = b.default_queue(); g = BreakableGraph(b, CaptureMode.PIECEWISE)
    runs = []
    x = b.alloc((2,))
    with GraphCaptureScope(b, q, g) as s:
        runs.append(1); x.add_(1); s.break_point(lambda: runs.append("break"))
    st = get_graph_break_stats()
    print(json.dumps({"inert": s.inert, "runs": runs, "segments": len(g.segments),
                      "captured": st.segments_captured, "inert_scopes": st.inert_scopes,
                      "x": x.tolist(), "captures": b.trace_ops().count("begin_capture")}))
"""


def _child(env: dict[str, str]) -> dict:
    proc = run_child(CHILD, env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_seam_cudagraph_0_makes_the_scope_inert_and_runs_the_body_exactly_once() -> None:
    off = _child({"SEAM_CUDAGRAPH": "0"})
    assert off == {"inert": True, "runs": [1, "break"], "segments": 0, "captured": 0, "inert_scopes": 1,
                   "x": [1.0, 1.0], "captures": 0}


def test_the_same_child_with_the_switch_on_captures_so_the_inert_check_can_fail() -> None:
    on = _child({"SEAM_CUDAGRAPH": "1"})
    assert on["inert"] is False and on["captured"] == 2 and on["captures"] == 2
    assert on["x"] == [0.0, 0.0], "a capture does not run its body: the write is only recorded"


def test_an_eager_backend_makes_the_scope_inert_and_runs_the_body_exactly_once() -> None:
    b = EagerBackend()
    q = b.default_queue()
    graph = BreakableGraph(b, CaptureMode.FULL)
    runs: list[int] = []
    x = b.alloc((2,))
    with GraphCaptureScope(b, q, graph) as scope:
        runs.append(1)
        x.add_(1)
    assert scope.inert and runs == [1] and torch.equal(x, torch.ones(2))
    assert "begin_capture" not in b.trace_ops() and graph.segments == []
    stats = get_graph_break_stats()
    assert (stats.inert_scopes, stats.segments_captured) == (1, 0)
