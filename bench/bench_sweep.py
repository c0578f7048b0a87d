"""Benchmark: `mutmut run` against `seamgate sweep` on the same file and tests, in one run: mutants per second.

    .venv/bin/python bench/bench_sweep.py                                   # seam/step_input.py, its two suites
    .venv/bin/python bench/bench_sweep.py --file harness/judge/lane.py --tests tests/harness/test_judge_lane.py

Each tool gets its own scratch copy of the working tree (tracked and untracked files, not ignored
ones; never the user's tree) and starts from nothing: mutmut's `mutants/` does not exist, and the
sweep runs with `--fresh`. Both run 2 at a time (`mutmut run --max-children 2`, `seamgate sweep
--jobs 2`), both time their whole command (mutmut's generation, stats and clean run included; the
sweep's baseline with reach included). mutmut stops each mutant at its first failing test; the
sweep runs every test that reaches it and records every killer, so it does more work per killed
mutant. Target (issue 13): the sweep within 2x of mutmut's rate.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
#: torch suites fork mutmut's workers from a fork server (forking after torch ran its thread pool can hang).
TORCH = {"process_isolation": "forkserver", "pytest_add_cli_args": ["-p", "no:randomly"]}


def mirror(dest: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for rel in listed:
        if rel and (ROOT / rel).is_file() and not rel.startswith(".seamgate/"):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)


def narrow(copy: Path, file: str, tests: list[str]) -> None:
    """The copy's [tool.mutmut]: mutate ``file`` only, run ``tests``."""
    text = (copy / "pyproject.toml").read_text()
    base = tomllib.loads(text).get("tool", {}).get("mutmut", {})
    table = {**base, "only_mutate": [file], "pytest_add_cli_args_test_selection": tests,
             "use_git_change_detection": False, **TORCH}
    text = re.sub(r"\n\[tool\.mutmut\]\n(?:(?!\n\[).)*", "\n", text, flags=re.S)
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in table.items())
    (copy / "pyproject.toml").write_text(text.rstrip() + "\n\n[tool.mutmut]\n" + body + "\n")


def run_mutmut(copy: Path, jobs: int) -> tuple[int, float, dict[str, int]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEAM_")}
    env["OMP_NUM_THREADS"] = "1"
    started = time.perf_counter()
    with open(copy / "mutmut.log", "w") as log:
        done = subprocess.run([str(BIN / "mutmut"), "run", "--max-children", str(jobs)], cwd=copy, env=env,
                              stdout=log, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"mutmut run failed ({done.returncode}): see {copy / 'mutmut.log'}")
    codes: dict[str, int] = {}
    count = 0
    for meta in (copy / "mutants").rglob("*.py.meta"):
        for code in json.loads(meta.read_text())["exit_code_by_key"].values():
            count += 1
            codes[str(code)] = codes.get(str(code), 0) + 1
    return count, wall, codes


def run_sweep(copy: Path, file: str, tests: list[str], jobs: int) -> tuple[int, float, dict[str, int]]:
    argv = [str(BIN / "seamgate"), "--project", str(copy), "sweep", file, "--fresh", "--jobs", str(jobs)]
    for t in tests:
        argv += ["--tests", t]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEAM_")}
    started = time.perf_counter()
    with open(copy / "sweep.log", "w") as log:
        done = subprocess.run(argv, cwd=copy, env=env, stdout=log, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"seamgate sweep failed ({done.returncode}): see {copy / 'sweep.log'}")
    data = json.loads((copy / ".seamgate" / "runs" / "latest-sweep" / "outcomes.json").read_text())["sweep"]
    statuses: dict[str, int] = {}
    for m in data["mutants"]:
        statuses[m["status"]] = statuses.get(m["status"], 0) + 1
    killers = sum(len(m["killers"]) for m in data["mutants"])
    statuses["killers recorded"] = killers
    return len(data["mutants"]), wall, statuses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="seam/step_input.py")
    parser.add_argument("--tests", action="append", default=[])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the scratch copies (their logs)")
    args = parser.parse_args(argv)
    tests = args.tests or ["tests/seam/test_step_input.py", "tests/seam/test_step_input_behaviour.py"]
    scratch = Path(tempfile.mkdtemp(prefix="seamgate-bench-sweep-"))
    try:
        for name in ("mutmut", "sweep"):
            (scratch / name).mkdir()
            mirror(scratch / name)
        narrow(scratch / "mutmut", args.file, tests)
        print(f"file {args.file}; tests {' '.join(tests)}; {args.jobs} at a time; "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)
        m_count, m_wall, m_codes = run_mutmut(scratch / "mutmut", args.jobs)
        print(f"mutmut run:     {m_count} mutants in {m_wall:7.1f} s = {m_count / m_wall:6.2f} mutants/s "
              f"(exit codes {m_codes}; stops at the first failing test)", flush=True)
        s_count, s_wall, s_status = run_sweep(scratch / "sweep", args.file, tests, args.jobs)
        print(f"seamgate sweep: {s_count} mutants in {s_wall:7.1f} s = {s_count / s_wall:6.2f} mutants/s "
              f"({s_status}; every killer)", flush=True)
        ratio = (m_count / m_wall) / (s_count / s_wall)
        print(f"ratio: mutmut is {ratio:.2f}x the sweep's rate (target: <= 2x); "
              f"load average now {os.getloadavg()[0]:.1f}")
        return 0
    finally:
        if args.keep:
            print(f"scratch kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
