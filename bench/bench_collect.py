"""Benchmark: a row's fixed cost in a forked child, measured as CPU seconds (load-independent).

Two comparisons, each side in freshly forked children of one process that imported torch and
pytest (as the fork server does), medians printed. The first is interleaved over ``--rounds``; the
second measures the cold side first (the parent's metadata cannot be made cold again):

* **seeded bytecode** (``runner.Session.seed_bytecode``): ``pytest --collect-only`` of the bundled
  union (tests/seam, tests/drivers, tests/fidelity) in a copy that holds the bytecode an earlier
  run left (pytest's rewritten test modules included) against a copy without it;
* **warm metadata** (``forkserver._warm_metadata``): a one-test session in a child whose parent
  read every distribution's metadata first, against one whose parent did not.

    .venv/bin/python bench/bench_collect.py --rounds 5
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UNION = ["tests/seam", "tests/drivers", "tests/fidelity"]


def child_cpu(cwd: Path, argv: list[str], write_bytecode: bool) -> float:
    """CPU seconds of ``pytest.main(argv)`` in a forked child (output discarded)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        import pytest

        os.chdir(cwd)
        sys.path.insert(0, str(cwd))
        sys.dont_write_bytecode = not write_bytecode
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        before = resource.getrusage(resource.RUSAGE_SELF)
        pytest.main(argv)
        after = resource.getrusage(resource.RUSAGE_SELF)
        used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        os.write(write, f"{used:.4f}".encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as fh:
        return float(fh.read())


def export(dest: Path) -> Path:
    """A copy of HEAD's tracked files (no bytecode), with its mtimes as git checked them out."""
    dest.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import pytest  # noqa: F401 - preloaded as in the fork server
    import torch  # noqa: F401

    collect = ["--collect-only", "-q", "-p", "no:cacheprovider", *UNION]
    with tempfile.TemporaryDirectory(prefix="seamgate-bench-collect-") as tmp:
        base = export(Path(tmp) / "base")
        child_cpu(base, collect, write_bytecode=True)  # the baseline run leaves its bytecode
        seeded, cold = [], []
        for i in range(args.rounds):
            warm_copy, cold_copy = Path(tmp) / f"w{i}", Path(tmp) / f"c{i}"
            shutil.copytree(base, warm_copy)  # with __pycache__, mtimes kept (copy2)
            shutil.copytree(base, cold_copy, ignore=shutil.ignore_patterns("__pycache__"))
            seeded.append(child_cpu(warm_copy, collect, write_bytecode=True))
            cold.append(child_cpu(cold_copy, collect, write_bytecode=True))
        print(f"collect the union: seeded bytecode {statistics.median(seeded):.2f} s CPU, "
              f"none {statistics.median(cold):.2f} s CPU, ratio {statistics.median(cold) / statistics.median(seeded):.2f}x")

        one = Path(tmp) / "one"
        (one / "tests").mkdir(parents=True)
        (one / "pytest.ini").write_text("[pytest]\naddopts = -p no:seamgate\n")
        (one / "tests" / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
        session = ["-q", "-p", "no:cacheprovider", "tests"]
        plain = [child_cpu(one, session, write_bytecode=False) for _ in range(args.rounds * 4)]
        import importlib.metadata

        for dist in importlib.metadata.distributions():  # what forkserver._warm_metadata does
            dist.entry_points, dist.files
        warmed = [child_cpu(one, session, write_bytecode=False) for _ in range(args.rounds * 4)]
        print(f"one-test session: metadata warm {statistics.median(warmed) * 1000:.0f} ms CPU, "
              f"cold {statistics.median(plain) * 1000:.0f} ms CPU, "
              f"saved {100 * (1 - statistics.median(warmed) / statistics.median(plain)):.0f}%")


if __name__ == "__main__":
    main()
