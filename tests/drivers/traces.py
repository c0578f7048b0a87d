"""Every driver's backend trace, migrated and unmigrated, as JSON: to show a refactor changed no machinery.

``python -m tests.drivers.traces record OUT.json`` runs each driver, and its ``unmigrate-<driver>``
form (applied from the catalog, as G4 does), on the emulator and the eager backend with ``graph``
None/False/True (dense and moe also with a live token mirror), and records per run the backend's
operation sequence, the lane, the graph-break and step-input counters and a digest of the outputs.
Run it under each switch setting of interest (``SEAM_CUDAGRAPH=0``, the rollback switches).
``python -m tests.drivers.traces compare BEFORE.json AFTER.json`` prints every run that differs.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import torch

from drivers.config import DriverConfig
from drivers.scenarios import DRIVERS, run_scenario
from drivers.token_mirror import TokenMirror
from seam import Backend, EagerBackend, EmulatedBackend, get_graph_break_stats, get_step_input_stats
from seam import reset_graph_break_stats, reset_step_input_stats

from .test_equivalence import unmigrated_module

STEPS = 4


def _digest(outputs: list[torch.Tensor]) -> str:
    h = hashlib.sha256()
    for out in outputs:
        h.update(out.detach().to("cpu").contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def _record(backend: Backend, run: Callable[[Backend], tuple[Any, list[torch.Tensor]]]) -> dict[str, object]:
    reset_graph_break_stats()
    reset_step_input_stats()
    try:
        driver, outputs = run(backend)
    except Exception as exc:  # noqa: BLE001 - a run that raises is a fact to compare too
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    return {"ops": backend.trace_ops(), "lane": driver.lane, "graph_breaks": str(get_graph_break_stats()),
            "step_inputs": str(get_step_input_stats()), "digest": _digest(outputs)}


def _mirror_run(module: ModuleType, name: str, backend: Backend) -> tuple[Any, list[torch.Tensor]]:
    """dense (depth 2, 4 slots, no host tokens) or moe (depth 1, ids from the mirror) fed by a live mirror."""
    cfg = DriverConfig(slots=4) if name == "dense" else DriverConfig()
    with backend.use_queue(backend.default_queue()):
        mirror = TokenMirror(backend, cfg.slots, depth=2 if name == "dense" else 1)
        mirror.seed([1, 2, 3, 4] if name == "dense" else [5, 9])
        if name == "dense":
            driver = module.DenseDriver(backend, cfg, mirror=mirror)
            step = lambda pos: driver.step(None, pos)  # noqa: E731
        else:
            driver = module.MoeDriver(backend, cfg)
            step = lambda pos: driver.step(mirror.current(), pos)  # noqa: E731
        outputs = []
        for position in range(STEPS):
            outputs.append(step(position))
            mirror.publish(outputs[-1])
    return driver, outputs


def record() -> dict[str, dict[str, object]]:
    """Every run's record, keyed ``driver/form/backend/graph=...`` (and ``driver/form/mirror``)."""
    found: dict[str, dict[str, object]] = {}
    folder = Path(tempfile.mkdtemp(prefix="driver-traces-"))
    for name in DRIVERS:
        for form, module in (("migrated", DRIVERS[name][0]), ("unmigrated", unmigrated_module(name, folder))):
            for label, make in (("emulated", EmulatedBackend), ("eager", EagerBackend)):
                for graph in (None, False, True):
                    found[f"{name}/{form}/{label}/graph={graph}"] = _record(
                        make(), lambda b: run_scenario(name, b, steps=STEPS, module=module, graph=graph))
            if name in ("dense", "moe"):
                found[f"{name}/{form}/mirror"] = _record(EmulatedBackend(), lambda b: _mirror_run(module, name, b))
    return found


def compare(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[str]:
    """One line per run whose record differs (the op sequences as a short unified diff)."""
    lines = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key, {}), after.get(key, {})
        if old == new:
            continue
        fields = {f: (old.get(f), new.get(f)) for f in sorted(set(old) | set(new)) if f != "ops" and old.get(f) != new.get(f)}
        ops = [d for d in difflib.unified_diff(old.get("ops", []), new.get("ops", []), n=0, lineterm="")][2:]
        lines.append(f"{key}: {fields or ''} {' '.join(ops)}".rstrip())
    return lines


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "record":
        runs = record()
        Path(argv[1]).write_text(json.dumps(runs, indent=0))
        print(f"{len(runs)} runs recorded in {argv[1]}")
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        before, after = (json.loads(Path(p).read_text()) for p in argv[1:])
        differ = compare(before, after)
        print("\n".join(differ + [f"{len(differ)} of {len(before)} runs differ"]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
