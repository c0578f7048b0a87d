"""Benchmark: per-run overhead of the fork server against a fresh interpreter per run.

The same N runs of a one-test fixture project go through each launcher. Two measures of the
overhead of a run are printed:

* ``isolation overhead`` (the target's measure): the run's wall time (request to exit, as the
  executor measures it) minus the WORK, where the work is the pytest session's duration in a warm
  process (the fork child's session, median). Everything a fresh process adds beyond the test's own
  work counts, including re-importing torch, which is what the fork server exists to avoid;
* ``wall - own session``: wall time minus each run's own session duration. A fresh interpreter
  imports torch during collection, INSIDE its session, so this measure books that import as work.

The fixture test imports torch, as every seam test does; ``--no-torch`` benchmarks one that imports
nothing.

    .venv/bin/python bench/bench_forkserver.py --runs 20 [--breakdown]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.rows.executor import HARNESS_ROOT, Executor, Run, _front, pytest_argv, run_environment  # noqa: E402
from harness.rows.forkserver import ForkServer, FreshInterpreter  # noqa: E402


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


def measure(launcher, tree: Path, work: Path, runs: int) -> tuple[float, list[float], list[float]]:
    """Total seconds, and per run: wall times and own session durations."""
    executor = Executor(launcher, work)
    walls, sessions = [], []
    started = time.perf_counter()
    for i in range(runs):
        outcome = executor.execute(Run(f"bench-{i}", tree, ("tests",), timeout=120))
        if outcome.end != "completed" or outcome.exit_code != 0:
            raise RuntimeError(f"benchmark run {i} did not pass: {outcome.end} {outcome.exit_code} {outcome.detail}")
        walls.append(outcome.wall)
        sessions.append(outcome.session)
    return time.perf_counter() - started, walls, sessions


def forked(server: ForkServer, tree: Path, work: Path, runs: int, argv: list[str], env: dict[str, str],
           ours: bool = False) -> list[float]:
    """Wall times (request to exit) of ``runs`` pytest sessions ``argv`` forked from ``server``, sent as
    raw requests (``ours``: with the executor's import roots and the harness on the path)."""
    work.mkdir(parents=True, exist_ok=True)
    where = {**_front(tree), "path_back": [str(HARNESS_ROOT)]} if ours else \
        {"path_front": [str(tree)], "path_back": [], "claim": []}
    walls = []
    for i in range(runs):
        request = {"mode": "pytest", "argv": [a.replace("{i}", str(i)) for a in argv], "cwd": str(tree),
                   "env": run_environment(env, tree, None), **where,
                   "stdout": str(work / f"{i}.out"), "stderr": str(work / f"{i}.err")}
        started = time.perf_counter()
        handle = server.submit(request)
        if not handle.wait(120) or handle.status != 0:
            raise RuntimeError(f"run {i} of {argv} did not pass: {handle.status}; see {work / f'{i}.out'}")
        walls.append(time.perf_counter() - started)
    return walls


def floor(server: ForkServer, tree: Path, work: Path, runs: int) -> list[float]:
    """Wall times of a BARE pytest session per forked child: no plugin of ours, no JUnit, no
    entry-point plugin, nothing the executor adds. What is left above the work is pytest's own
    configuration and teardown plus the fork: the least any pytest-per-run launcher can cost."""
    return forked(server, tree, work, runs, BARE, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})


#: A bare session's command line (the fixture's own ini still applies).
BARE = ["tests", "-q", "-p", "no:cacheprovider"]


def breakdown(server: ForkServer, tree: Path, work: Path, runs: int) -> dict[str, list[float]]:
    """Wall times of the executor's run with one part taken away at a time, then of a bare session
    with JUnit, so the distance from the floor splits into its parts (``--breakdown``)."""
    full = pytest_argv(Run("b", tree, ("tests",)), work / "{i}.xml", work / "{i}.json")
    no_zygote = [a for i, a in enumerate(full) if a != "harness.rows.pytest_zygote"
                 and not (a == "-p" and i + 1 < len(full) and full[i + 1] == "harness.rows.pytest_zygote")]
    return {
        "the executor's run": forked(server, tree, work / "full", runs, full, {}, ours=True),
        "  without the zygote": forked(server, tree, work / "nozyg", runs, no_zygote, {}, ours=True),
        "  without entry-point plugins": forked(server, tree, work / "noep", runs, full,
                                                {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, ours=True),
        "a bare session with JUnit": forked(server, tree, work / "junit", runs,
                                            [*BARE, "--junitxml", str(work / "j{i}.xml")],
                                            {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}),
    }


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-torch", action="store_true", help="the fixture test imports nothing")
    parser.add_argument("--with-seam-plugin", action="store_true",
                        help="let the editable install's seam.pytest_plugin load in every run (imports seam)")
    parser.add_argument("--breakdown", action="store_true",
                        help="also time the executor's run without the zygote, without entry-point plugins, and "
                             "a bare session with JUnit (where the distance from the floor goes)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="seamgate-bench-") as tmp:
        tree = fixture(Path(tmp) / "proj", not args.no_torch, args.with_seam_plugin)
        t0 = time.perf_counter()
        server = ForkServer().start()
        start_cost = time.perf_counter() - t0
        try:
            fork_total, fork_wall, fork_session = measure(server, tree, Path(tmp) / "fork", args.runs)
            bare_wall = floor(server, tree, Path(tmp) / "bare", args.runs)
            parts = breakdown(server, tree, Path(tmp) / "parts", args.runs) if args.breakdown else {}
        finally:
            server.close()
        fresh_total, fresh_wall, fresh_session = measure(FreshInterpreter(), tree, Path(tmp) / "fresh", args.runs)
    med = statistics.median
    work = med(fork_session)  # the test's own work, in a warm process
    iso_fork, iso_fresh = med(fork_wall) - work, med(fresh_wall) - work
    own_fork = med([w - s for w, s in zip(fork_wall, fork_session)])
    own_fresh = med([w - s for w, s in zip(fresh_wall, fresh_session)])
    print(f"runs: {args.runs} each; fixture test imports torch: {not args.no_torch}; "
          f"seam.pytest_plugin loaded: {args.with_seam_plugin}; work (warm session, median) {ms(work)}")
    print(f"fork server      : total {fork_total:7.2f} s (+ {start_cost:.2f} s server start, once), "
          f"wall/run {ms(med(fork_wall))}, isolation overhead {ms(iso_fork)}, wall - own session {ms(own_fork)}")
    print(f"fresh interpreter: total {fresh_total:7.2f} s, "
          f"wall/run {ms(med(fresh_wall))}, isolation overhead {ms(iso_fresh)}, wall - own session {ms(own_fresh)}")
    print(f"pytest's floor   : a bare pytest session (no plugin of ours, no JUnit, no entry points) per forked "
          f"child: wall/run {ms(med(bare_wall))}, isolation overhead {ms(med(bare_wall) - work)}")
    for name, walls in parts.items():
        print(f"  {name:31s}: wall/run {ms(med(walls))}, isolation overhead {ms(med(walls) - work)}")
    print(f"ratio (fresh/fork): total {fresh_total / fork_total:.1f}x, isolation overhead {iso_fresh / iso_fork:.1f}x, "
          f"wall - own session {own_fresh / own_fork:.1f}x")
    print(f"targets: isolation overhead/run <= 25 ms (issue 10): {'met' if iso_fork <= 0.025 else 'NOT met'}; "
          f"<= 100 ms (first target): {'met' if iso_fork <= 0.1 else 'NOT met'}; "
          f">= 10x less than a fresh interpreter: {'met' if iso_fresh / iso_fork >= 10 else 'NOT met'}")


if __name__ == "__main__":
    main()
