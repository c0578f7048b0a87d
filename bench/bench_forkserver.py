"""Benchmark: per-run overhead of the fork server against a fresh interpreter per run.

The same N runs of a one-test fixture project go through each launcher. Overhead per run is the
run's wall time (request to exit, as the executor measures it) minus the pytest session's own
duration (from the counting plugin). The fixture test imports torch, as every seam test does;
``--no-torch`` benchmarks a test that imports nothing.

    .venv/bin/python bench/bench_forkserver.py --runs 20
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.executor import Executor, Run  # noqa: E402
from harness.forkserver import ForkServer, FreshInterpreter  # noqa: E402


def fixture(root: Path, with_torch: bool, project_plugin: bool) -> Path:
    (root / "tests").mkdir(parents=True)
    if not project_plugin:
        # The venv's editable seamgate install registers ``seam.pytest_plugin`` (pytest11), which
        # imports the whole ``seam`` package in every run: project code, paid afresh per run by
        # both launchers. A fixture that does not use it opts out, so what is left is our overhead.
        (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:seamgate\n")
    head = "import torch\n\n\n" if with_torch else ""
    body = "assert torch.ones(2).sum().item() == 2.0" if with_torch else "assert 1 + 1 == 2"
    (root / "tests" / "test_one.py").write_text(f"{head}def test_one():\n    {body}\n")
    return root


def measure(launcher, tree: Path, work: Path, runs: int) -> tuple[float, list[float]]:
    executor = Executor(launcher, work)
    overheads = []
    started = time.perf_counter()
    for i in range(runs):
        outcome = executor.execute(Run(f"bench-{i}", tree, ("tests",), timeout=120))
        if outcome.end != "completed" or outcome.exit_code != 0:
            raise RuntimeError(f"benchmark run {i} did not pass: {outcome.end} {outcome.exit_code} {outcome.detail}")
        overheads.append(outcome.wall - outcome.session)
    return time.perf_counter() - started, overheads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-torch", action="store_true", help="the fixture test imports nothing")
    parser.add_argument("--with-seam-plugin", action="store_true",
                        help="let the editable install's seam.pytest_plugin load in every run (imports seam)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="seamgate-bench-") as tmp:
        tree = fixture(Path(tmp) / "proj", not args.no_torch, args.with_seam_plugin)
        t0 = time.perf_counter()
        server = ForkServer().start()
        start_cost = time.perf_counter() - t0
        try:
            fork_total, fork = measure(server, tree, Path(tmp) / "fork", args.runs)
        finally:
            server.close()
        fresh_total, fresh = measure(FreshInterpreter(), tree, Path(tmp) / "fresh", args.runs)
    fork_med, fresh_med = statistics.median(fork), statistics.median(fresh)
    print(f"runs: {args.runs} each; fixture test imports torch: {not args.no_torch}; "
          f"seam.pytest_plugin loaded: {args.with_seam_plugin}")
    print(f"fork server      : total {fork_total:7.2f} s (+ {start_cost:.2f} s server start), "
          f"overhead/run median {fork_med * 1000:6.1f} ms, mean {statistics.mean(fork) * 1000:6.1f} ms")
    print(f"fresh interpreter: total {fresh_total:7.2f} s, "
          f"overhead/run median {fresh_med * 1000:6.1f} ms, mean {statistics.mean(fresh) * 1000:6.1f} ms")
    print(f"wall/run mean    : fork {fork_total / args.runs * 1000:6.1f} ms, fresh {fresh_total / args.runs * 1000:6.1f} ms")
    print(f"ratio (fresh/fork): total {fresh_total / fork_total:.1f}x, overhead/run (wall - session) {fresh_med / fork_med:.1f}x")


if __name__ == "__main__":
    main()
