"""Benchmark: a project's own pytest with seamgate's pytest11 plugin loaded against the same session without it.

Issue 15: installing seamgate must leave a project's suite unchanged in outcome and within 5% in time.
The project is ``tests/realworld``'s flat one (``filterwarnings = error``, no seam test). Each round runs
``python -m pytest`` twice in fresh interpreters, alternating the order: once as installed (the
``seamgate_plugin`` entry point autoloads) and once with ``-p no:seamgate`` (the plugin blocked by
name). Prints both medians, the ratio and whether the outcomes were the same.

    .venv/bin/python bench/bench_plugin.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.realworld.projects import write  # noqa: E402


def once(project: Path, extra: list[str]) -> tuple[float, int, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra], cwd=project,
                          capture_output=True, text=True)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    return time.perf_counter() - started, done.returncode, last.split(" in ")[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = write(Path(tmp), "flatpkg")
        times: dict[str, list[float]] = {"with": [], "without": []}
        outcomes: dict[str, set[tuple[int, str]]] = {"with": set(), "without": set()}
        for n in range(args.rounds):
            order = [("with", []), ("without", ["-p", "no:seamgate"])]
            for name, extra in (order if n % 2 == 0 else order[::-1]):
                wall, code, summary = once(project, extra)
                times[name].append(wall)
                outcomes[name].add((code, summary))
    with_s, without_s = statistics.median(times["with"]), statistics.median(times["without"])
    print(f"rounds {args.rounds}: with the plugin {with_s * 1000:.0f} ms, without {without_s * 1000:.0f} ms (medians), "
          f"ratio {with_s / without_s:.3f}")
    print(f"outcomes with {sorted(outcomes['with'])}, without {sorted(outcomes['without'])}, "
          f"same: {outcomes['with'] == outcomes['without']}")
    return 0 if outcomes["with"] == outcomes["without"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
