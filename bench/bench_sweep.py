"""Benchmark: `mutmut run` against `seamgate sweep` on the same file and tests, in one run: mutants per second.

    .venv/bin/python bench/bench_sweep.py                                   # seam/step_input.py, its two suites
    .venv/bin/python bench/bench_sweep.py --file harness/judge/lane.py --tests tests/harness/test_judge_lane.py
    .venv/bin/python bench/bench_sweep.py --real                            # the three PyPI projects of issue 26
    .venv/bin/python bench/bench_sweep.py --real cachetools --all-killers   # one of them; the full kill matrix too

``--real`` downloads the pinned sdists of ``REAL`` with pip into a temp folder (nothing of theirs is
kept or committed) and benches each project's module against its tests: a table of mutants/s for
mutmut and for the sweep side by side, the ratio, and whether the scores and the survivor sets agree
(a survivor: mutmut's "survived" or "no tests"; the sweep's ``survived`` or ``no_coverage``; score:
the mutants not surviving over all mutants, the same rule for both).

Each tool gets its own scratch copy of the working tree (tracked and untracked files, not ignored
ones; never the user's tree) and starts from nothing: mutmut's `mutants/` does not exist, and the
sweep runs with `--fresh`. Both run 2 at a time (`mutmut run --max-children 2`, `seamgate sweep
--jobs 2`), both time their whole command (mutmut's generation, stats and clean run included; the
sweep's baseline with reach included). Both stop each mutant at its first failing test (the sweep's
default); ``--all-killers`` also times the sweep recording every killer. Target (issue 26): the sweep
at least as fast as mutmut, with the same survivors; ``--all-killers`` within 3x of the default.
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
#: The real projects of issue 26: (pip requirement, sdist folder, the module swept, its tests, mutmut's source_paths).
REAL = {
    "cachetools": ("cachetools==8.0.2", "cachetools-8.0.2", "src/cachetools/_cached.py", ["tests"], ["src"]),
    "toolz": ("toolz==1.2.0", "toolz-1.2.0", "toolz/dicttoolz.py", ["toolz/tests/test_dicttoolz.py"], ["toolz"]),
    "dateutil": ("python-dateutil==2.9.0.post0", "python-dateutil-2.9.0.post0", "src/dateutil/easter.py",
                 ["tests/test_easter.py"], ["src"]),
}


def mirror(dest: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for rel in listed:
        if rel and (ROOT / rel).is_file() and not rel.startswith(".seamgate/"):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)


def narrow(copy: Path, file: str, tests: list[str], extra: dict | None = None) -> None:
    """The copy's [tool.mutmut]: mutate ``file`` only, run ``tests``."""
    text = (copy / "pyproject.toml").read_text()
    base = tomllib.loads(text).get("tool", {}).get("mutmut", {})
    table = {**base, "only_mutate": [file], "pytest_add_cli_args_test_selection": tests,
             "use_git_change_detection": False, **TORCH, **(extra or {})}
    text = re.sub(r"\n\[tool\.mutmut\]\n(?:(?!\n\[).)*", "\n", text, flags=re.S)
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in table.items())
    (copy / "pyproject.toml").write_text(text.rstrip() + "\n\n[tool.mutmut]\n" + body + "\n")


def run_mutmut(copy: Path, jobs: int) -> tuple[int, float, dict[str, int]]:
    count, wall, codes, _ = run_mutmut_ids(copy, jobs)
    return count, wall, codes


def run_mutmut_ids(copy: Path, jobs: int) -> tuple[int, float, dict[str, int], set[str]]:
    """(mutants, seconds, exit codes counted, the survivors' ids: mutmut's "survived" and "no tests")."""
    from mutmut.stats import status_by_exit_code

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
    survivors: set[str] = set()
    count = 0
    for meta in (copy / "mutants").rglob("*.py.meta"):
        for key, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            count += 1
            codes[str(code)] = codes.get(str(code), 0) + 1
            if status_by_exit_code.get(code) in ("survived", "no tests"):
                survivors.add(key)
    return count, wall, codes, survivors


def run_sweep(copy: Path, file: str, tests: list[str], jobs: int, *more: str) -> tuple[int, float, dict[str, int]]:
    count, wall, statuses, _ = run_sweep_ids(copy, file, tests, jobs, *more)
    return count, wall, statuses


def run_sweep_ids(copy: Path, file: str, tests: list[str], jobs: int,
                  *more: str) -> tuple[int, float, dict[str, int], set[str]]:
    """(mutants, seconds, statuses counted, the survivors' ids: ``survived`` and ``no_coverage``)."""
    argv = [str(BIN / "seamgate"), "--project", str(copy), "sweep", file, "--fresh", "--jobs", str(jobs), *more]
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
    survivors = {m["id"] for m in data["mutants"] if m["status"] in ("survived", "no_coverage")}
    return len(data["mutants"]), wall, statuses, survivors


def real_project(name: str, scratch: Path) -> Path:
    """The sdist of ``REAL[name]``, downloaded with pip into ``scratch`` and unpacked: its folder."""
    requirement, folder = REAL[name][:2]
    sdists = scratch / "sdists"
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                    requirement, "-d", str(sdists)], check=True)
    archive = next(p for p in sdists.glob("*.tar.gz") if p.name.startswith(folder))
    shutil.unpack_archive(archive, scratch / "unpacked")
    return scratch / "unpacked" / folder


def bench_real(name: str, scratch: Path, jobs: int, all_killers: bool) -> dict[str, object]:
    """One real project: mutmut and the sweep on their own copies of the sdist; a row of the table."""
    _, _, file, tests, source_paths = REAL[name]
    source = real_project(name, scratch)
    copies = {}
    for tool in ("mutmut", "sweep"):
        copies[tool] = scratch / name / tool
        shutil.copytree(source, copies[tool])
    # mutmut as a new user runs it: its default fork isolation (TORCH's fork server is for torch suites)
    narrow(copies["mutmut"], file, tests, {"source_paths": source_paths, "process_isolation": "fork",
                                          "pytest_add_cli_args": ["-p", "no:randomly"]})
    with open(copies["sweep"] / "pyproject.toml", "a") as pyproject:
        pyproject.write("\n[tool.seamgate]\n")
    m_count, m_wall, m_codes, m_alive = run_mutmut_ids(copies["mutmut"], jobs)
    s_count, s_wall, s_status, s_alive = run_sweep_ids(copies["sweep"], file, tests, jobs)
    row = {"project": name, "file": file, "tests": tests, "mutmut": (m_count, m_wall, m_codes),
           "sweep": (s_count, s_wall, s_status), "same_survivors": m_alive == s_alive,
           "only_mutmut": sorted(m_alive - s_alive), "only_sweep": sorted(s_alive - m_alive),
           "scores": (score(m_count, m_alive), score(s_count, s_alive))}
    if all_killers:
        shutil.rmtree(copies["sweep"] / ".seamgate", ignore_errors=True)
        row["all_killers"] = run_sweep_ids(copies["sweep"], file, tests, jobs, "--all-killers")[:3]
    return row


def score(count: int, survivors: set[str]) -> float:
    return 100.0 * (count - len(survivors)) / count if count else float("nan")


def print_real(row: dict[str, object]) -> None:
    m_count, m_wall, m_codes = row["mutmut"]  # type: ignore[misc]
    s_count, s_wall, s_status = row["sweep"]  # type: ignore[misc]
    m_rate, s_rate = m_count / m_wall, s_count / s_wall
    m_score, s_score = row["scores"]  # type: ignore[misc]
    print(f"{row['project']:<11} {row['file']:<28} mutmut {m_count:4d} in {m_wall:6.1f} s = {m_rate:6.2f}/s | "
          f"sweep {s_count:4d} in {s_wall:6.1f} s = {s_rate:6.2f}/s | sweep/mutmut rate {s_rate / m_rate:5.2f} | "
          f"scores {m_score:.1f}% / {s_score:.1f}% | survivors "
          + ("the same" if row["same_survivors"] else f"DIFFER (only mutmut: {row['only_mutmut']}; "
                                                      f"only the sweep: {row['only_sweep']})"), flush=True)
    print(f"            mutmut exit codes {m_codes}; sweep {s_status}", flush=True)
    if "all_killers" in row:
        a_count, a_wall, a_status = row["all_killers"]  # type: ignore[misc]
        print(f"            sweep --all-killers: {a_count} in {a_wall:.1f} s = {a_count / a_wall:.2f}/s, "
              f"{a_wall / s_wall:.2f}x the default's time ({a_status})", flush=True)


def main_real(names: list[str], jobs: int, all_killers: bool, keep: bool) -> int:
    scratch = Path(tempfile.mkdtemp(prefix="seamgate-bench-real-"))
    try:
        print(f"{jobs} at a time; load average {os.getloadavg()[0]:.1f}; pytest -p no:randomly for both", flush=True)
        for name in names:
            print_real(bench_real(name, scratch, jobs, all_killers))
        print(f"load average now {os.getloadavg()[0]:.1f}")
        return 0
    finally:
        if keep:
            print(f"scratch kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


#: The tests of the default mode when no ``--tests`` is given: the two suites of ``seam/step_input.py``.
DEFAULT_TESTS = ["tests/seam/test_step_input.py", "tests/seam/test_step_input_behaviour.py"]
#: How long each mode ran where it was measured, on the shared 2-core machine (figures and load in
#: docs/sweep.md and docs/benchmarks.md); a quiet machine takes less.
RUN_TIME = """how long each mode takes (2 cores, shared; the load changes it up to 2x):
  default mode: about 20-25 min (mutmut alone took 1014 s on the 145 mutants of seam/step_input.py,
    2026-12-01, docs/sweep.md; the sweep then 327 s, less since it stops at each mutant's first killer)
  --real: about 6 min for the three projects (docs/benchmarks.md, 2026-12-03 09:41-09:47 UTC)
  --real --all-killers: about 15 min (2026-12-03 09:47-10:02 UTC; cachetools' --all-killers 517 s of it)"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=RUN_TIME,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", default="seam/step_input.py", help="the module both tools mutate "
                        "(default: %(default)s)")
    parser.add_argument("--tests", action="append", default=[], help="a test path both tools run; repeat it "
                        f"(default: {' '.join(DEFAULT_TESTS)})")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time, for each tool (default: %(default)s)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copies (their logs) (default: removed)")
    parser.add_argument("--real", nargs="*", choices=sorted(REAL), default=None, metavar="PROJECT",
                        help=f"bench the real PyPI projects instead (no PROJECT: all of {', '.join(REAL)}; "
                             "default: the default mode on --file)")
    parser.add_argument("--all-killers", action="store_true", help="with --real: also time sweep --all-killers "
                        "(default: off)")
    args = parser.parse_args(argv)
    if args.real is not None:
        return main_real(args.real or sorted(REAL), args.jobs, args.all_killers, args.keep)
    tests = args.tests or DEFAULT_TESTS
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
              f"({s_status}; stops at the first killer)", flush=True)
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
