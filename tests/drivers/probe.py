"""What a driver did under this process's switches: run in CHILD processes (switches are read once).

``python -m tests.drivers.probe ARM`` prints one JSON line: for every driver, the lane it took and
the machinery counters of a short run on a fresh backend of ``ARM``. The parent sets the
environment (``SEAM_CUDAGRAPH=0``, ``SEAM_<DRIVER>_GRAPH=0``) and reads the line.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path

from drivers.draft import lane_fingerprint
from drivers.fingerprint import backend_by_name
from drivers.scenarios import DRIVERS, run_scenario
from harness.zygote import run_python
from seam import get_graph_break_stats, reset_graph_break_stats, reset_step_input_stats
from seam.torch_cuda import child_environment

ROOT = Path(__file__).resolve().parents[2]
#: Steps each driver runs in a probe.
PROBE_STEPS = 3


def probe(arm: str) -> dict[str, dict[str, object]]:
    """Every driver's lane and counters after ``PROBE_STEPS`` steps on a fresh ``arm`` backend, and
    under ``draft_fingerprint`` the draft's ``lane_fingerprint(arm)``."""
    found = {}
    for name in DRIVERS:
        reset_graph_break_stats()
        reset_step_input_stats()
        backend = backend_by_name(arm)
        driver, _ = run_scenario(name, backend, steps=PROBE_STEPS)
        stats = get_graph_break_stats()
        found[name] = {
            "lane": driver.lane,
            "begin_captures": backend.trace_ops().count("begin_capture"),
            "segments_captured": stats.segments_captured,
            "inert_scopes": stats.inert_scopes,
            "launches": backend.stats.launches,
        }
    reset_graph_break_stats()
    found["draft_fingerprint"] = lane_fingerprint(arm)
    return found


def run_child(args: list[str], env: dict[str, str]) -> str:
    """Run ``python ARGS`` in a fresh interpreter at the project root; its last stdout line. In a
    seamgate run the interpreter is forked from the run's zygote, torch loaded (``harness/zygote.py``).
    Inside ``emulate_cuda()`` the child runs emulated too (``child_environment``)."""
    full_env = child_environment({**os.environ, "PYTHONPATH": str(ROOT), **env})
    proc = run_python(args, env=full_env, cwd=ROOT, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"child {args} under {env} failed (exit {proc.returncode}):\n{proc.stderr}")
    return proc.stdout.strip().splitlines()[-1]


ROLLBACK_ALL = {f"SEAM_{name.upper()}_GRAPH": "0" for name in DRIVERS}


@functools.cache
def probe_in_child(arm: str, switches: tuple[tuple[str, str], ...]) -> dict[str, dict[str, object]]:
    """``probe(arm)`` in a child process under ``switches`` (cached: one child per arm and setting)."""
    return json.loads(run_child(["-m", "tests.drivers.probe", arm], dict(switches)))


def cudagraph_off(arm: str) -> dict[str, dict[str, object]]:
    """Every driver under ``SEAM_CUDAGRAPH=0``."""
    return probe_in_child(arm, (("SEAM_CUDAGRAPH", "0"),))


def rollback_all(arm: str) -> dict[str, dict[str, object]]:
    """Every driver under its own rollback switch ``SEAM_<DRIVER>_GRAPH=0`` (each reads only its own)."""
    return probe_in_child(arm, tuple(sorted(ROLLBACK_ALL.items())))


@functools.cache
def draft_fingerprint_in_child(backend_name: str, env: tuple[tuple[str, str], ...] = ()) -> dict[str, object]:
    """``drivers.draft.lane_fingerprint(backend_name)`` in a child under ``env``."""
    code = f"import json; from drivers.draft import lane_fingerprint; print(json.dumps(lane_fingerprint({backend_name!r})))"
    return json.loads(run_child(["-c", code], dict(env)))


if __name__ == "__main__":
    print(json.dumps(probe(sys.argv[1])))
