"""G1 on CUDA: every driver's replayed graph reproduces its eager forward, bit for bit.

``python -m drivers.g1_cuda --out DIR``. For each driver on ``CudaBackend``: run ``REPLAYS`` steps
with changing inputs on the capture lane (the first step captures, every step replays), compare
each replay's output with the eager reference forward on the same device and with the driver's own
eager lane on a second ``CudaBackend``, and record (driver, replays, differing values,
segments_captured). The device name,
capability, torch version and git commit go in the same JSON (``DIR/g1_cuda.json``) as provenance.
Without CUDA it prints OWED with the reason, writes that JSON, and exits 0: an arm that could not
run is OWED, never green.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from drivers.scenarios import DRIVERS, differing_values, reference_scenario, run_scenario
from seam import CudaBackend, get_graph_break_stats, reset_graph_break_stats, reset_step_input_stats

#: Replays per driver (G1 asks for at least 4, each with changed inputs).
REPLAYS = 6


@dataclass(frozen=True)
class DriverResult:
    """One driver's G1 measurement."""

    driver: str  #: driver name
    replays: int  #: graph replays compared
    values: int  #: values compared
    differing_values: int  #: values that differ from the eager reference forward on CUDA (G1 needs 0)
    differing_vs_eager_lane: int  #: values that differ from the same driver's eager lane on CUDA
    segments_captured: int  #: segments the capture lane closed (G1 needs > 0)
    lane: str  #: lane the graphed run took (must be ``capture``)
    max_abs_vs_cpu_reference: float  #: information only: CPU and CUDA kernels differ in rounding

    @property
    def ok(self) -> bool:
        exact = self.differing_values == 0 and self.differing_vs_eager_lane == 0
        return exact and self.segments_captured > 0 and self.lane == "capture"


def measure(name: str) -> DriverResult:
    """Graphed vs eager on CUDA for one driver."""
    reset_graph_break_stats()
    reset_step_input_stats()
    driver, graphed = run_scenario(name, CudaBackend(), steps=REPLAYS)
    stats = get_graph_break_stats()
    values, differ = differing_values(graphed, reference_scenario(name, steps=REPLAYS, device="cuda"))
    _, eager_lane = run_scenario(name, CudaBackend(), steps=REPLAYS, graph=False)
    _, differ_lane = differing_values(graphed, eager_lane)
    cpu = reference_scenario(name, steps=REPLAYS)
    drift = max(float((g - r).abs().max()) for g, r in zip(graphed, cpu))
    return DriverResult(name, stats.replays, values, differ, differ_lane, stats.segments_captured, driver.lane, drift)


def provenance() -> dict[str, object]:
    """Where the measurement ran: device, capability, torch, CUDA runtime, commit."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = os.environ.get("SEAMGATE_COMMIT", "unknown")
    info: dict[str, object] = {"torch": torch.__version__, "cuda_runtime": torch.version.cuda, "commit": commit}
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        info.update(device=torch.cuda.get_device_name(), capability=f"sm_{major}{minor}")
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m drivers.g1_cuda", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for g1_cuda.json")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, object] = {"gate": "G1", "arm": "cuda", **provenance()}
    if not torch.cuda.is_available():
        report.update(status="OWED", reason="needs an NVIDIA GPU with a CUDA build of torch (torch.cuda.is_available() is False)")
        print(f"OWED: {report['reason']}")
    else:
        results = [measure(name) for name in DRIVERS]
        for r in results:
            print(f"{r.driver:10s} replays={r.replays} values={r.values} differing={r.differing_values} "
                  f"vs_eager_lane={r.differing_vs_eager_lane} segments_captured={r.segments_captured} lane={r.lane} "
                  f"(max |cuda-cpu| {r.max_abs_vs_cpu_reference:.2e}) {'PASS' if r.ok else 'FAIL'}")
        report.update(status="PASS" if all(r.ok for r in results) else "FAIL",
                      drivers=[{**asdict(r), "ok": r.ok} for r in results])
        print(f"G1 cuda on {report['device']} ({report['capability']}), torch {report['torch']}: {report['status']}")
    (args.out / "g1_cuda.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if report["status"] == "FAIL" else 0


if __name__ == "__main__":
    sys.exit(main())
