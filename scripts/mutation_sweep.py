"""Sweep seamgate itself with mutmut 3: score per file and folder, survivors named, equivalents subtracted.

    .venv/bin/python scripts/mutation_sweep.py judges            # harness/judge/evaluate.py, redfirst.py, lane.py, harness/plan/planner.py
    .venv/bin/python scripts/mutation_sweep.py seam drivers      # the other folders (slow: torch tests)
    .venv/bin/python scripts/mutation_sweep.py judges --fail-on-survivor   # what a CI step would call

mutmut 3 reads ``[tool.mutmut]`` from ``pyproject.toml`` (the whole sweep: every mutated file and every
test that guards them). This script never runs mutmut in the working tree: it mirrors the tree
(tracked and untracked, not ignored) into ``.seamgate/sweep/<target>/``, narrows the COPY's
``[tool.mutmut]`` to one target, and runs ``mutmut run`` there. The copy is kept, so a second sweep
after a change re-tests only the functions that changed (mutmut keys results by function hash).

A survivor listed in ``tests/equivalent_mutants.yaml`` (with the text of its mutated line and a
reason) leaves the denominator; an entry whose line no longer matches is reported as stale.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "tests" / "equivalent_mutants.yaml"
#: ``mutmut`` beside this interpreter (``python -m mutmut`` re-executes its module and warns).
MUTMUT = str(Path(sys.executable).with_name("mutmut"))

#: Each target: the files mutmut mutates, the tests that guard them, and extra settings for the copy's
#: [tool.mutmut] (a narrowing of the committed table). Torch targets fork workers from a fork server
#: (forking a process that already ran torch's thread pool can hang).
TORCH = {"process_isolation": "forkserver",
         # the RED product-bug test (see docs/mutation-score.md) and the two-process gloo barrier
         "pytest_add_cli_args": ["-p", "no:randomly", "-k", "not design_s4 and not gloo"]}
TARGETS: dict[str, tuple[list[str], list[str], dict[str, object]]] = {
    "judges": (["harness/judge/evaluate.py", "harness/judge/redfirst.py", "harness/judge/lane.py", "harness/plan/planner.py"],
               ["tests/harness/test_judge_evaluate.py", "tests/harness/test_judge_redfirst.py",
                "tests/harness/test_redfirst_collection.py", "tests/harness/test_judge_collection_errors.py", "tests/harness/test_judge_lane.py", "tests/harness/test_judge_planner.py",
                "tests/harness/test_evaluate.py"], {}),
    # The seam's rules. Suites that only run children (switches, inert, backend agreement) are left
    # out: mutmut maps a test to the code it runs IN-PROCESS, so a child's work is invisible to it.
    "seam": (["seam/scope.py", "seam/switches.py", "seam/graph.py", "seam/capture.py", "seam/capture_guard.py",
              "seam/step_input.py", "seam/stats.py", "seam/monitor.py"],
             ["tests/seam/test_scope.py", "tests/seam/test_capture_one.py", "tests/seam/test_emulator.py",
              "tests/seam/test_step_input.py", "tests/seam/test_scope_behaviour.py",
              "tests/seam/test_capture_one_behaviour.py", "tests/seam/test_emulator_behaviour.py",
              "tests/seam/test_capture_guard_behaviour.py", "tests/seam/test_step_input_behaviour.py"], TORCH),
    # The emulator: every capture runs through it, so each mutant re-runs most of the suite (slow).
    "emulator": (["seam/emulator.py", "seam/emulated_backend.py", "seam/collector.py"],
                 ["tests/seam/test_emulator.py", "tests/seam/test_emulator_behaviour.py",
                  "tests/seam/test_capture_guard_behaviour.py", "tests/seam/test_scope_behaviour.py"], TORCH),
    # drivers/g1_cuda.py runs on a GPU only; the exact and equivalence suites re-run every driver on
    # every arm (minutes per mutant), so the sweep reads the behaviour suite and two seam suites.
    "drivers": (["drivers/aux.py", "drivers/config.py", "drivers/dense.py", "drivers/draft.py",
                 "drivers/fingerprint.py", "drivers/graphed_step.py", "drivers/moe.py", "drivers/piecewise.py",
                 "drivers/resident.py", "drivers/scenarios.py", "drivers/step_token_ids.py",
                 "drivers/tiny_model.py", "drivers/token_mirror.py"],
                ["tests/drivers/test_drivers_behaviour.py", "tests/drivers/test_draft_seam.py",
                 "tests/drivers/test_resident_seam.py", "tests/drivers/test_dense_seam.py"], TORCH),
}
#: mutmut's exit codes (``mutmut.stats.status_by_exit_code``) folded to what the score needs. mutmut
#: counts pytest's exit 3 (INTERNALERROR) and timeouts as kills; we do not: under load (three agents on
#: two cores) a whole sweep once came back as exit 3, which says nothing about the tests. They are
#: re-run at the next sweep like survivors, and reported apart until then.
KILLED = {1, 37, -11}
SURVIVED, NO_TESTS = {0}, {5, 33}
RETEST = SURVIVED | NO_TESTS | {2, 3, 36, 24, -24, 152, 255, -9}


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    status: str  # killed | survived | no tests | skipped


def mirror(dest: Path) -> None:
    """Make ``dest`` hold the working tree's files (tracked and untracked, not ignored), nothing else."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    wanted = {p for p in listed if p and (ROOT / p).is_file()}
    dest.mkdir(parents=True, exist_ok=True)
    for path in dest.rglob("*"):
        rel = path.relative_to(dest).as_posix()
        if rel.startswith("mutants") or not path.is_file():
            continue
        if rel not in wanted:
            path.unlink()
    for rel in wanted:
        src, dst = ROOT / rel, dest / rel
        if dst.exists() and dst.read_bytes() == src.read_bytes():
            continue  # unchanged: keep its mtime, so mutmut sees no change
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)


def narrow(copy: Path, target: str, only: list[str] | None = None) -> None:
    """Rewrite the copy's [tool.mutmut] to mutate ``target``'s files (or ``only`` those) and run its tests."""
    files, tests, extra = TARGETS[target]
    files = only or files
    text = (copy / "pyproject.toml").read_text()
    base = tomllib.loads(text).get("tool", {}).get("mutmut")
    if base is None:
        raise SystemExit("pyproject.toml has no [tool.mutmut] table: the sweep's configuration lives there")
    table = {**base, "only_mutate": files, "pytest_add_cli_args_test_selection": tests, **extra}
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in table.items())
    text = re.sub(r"\n\[tool\.mutmut\]\n(?:(?!\n\[).)*", "\n", text, flags=re.S)
    (copy / "pyproject.toml").write_text(text.rstrip() + "\n\n[tool.mutmut]\n" + body + "\n")


def results(copy: Path) -> list[Mutant]:
    out = []
    for meta in sorted((copy / "mutants").rglob("*.py.meta")):
        rel = meta.relative_to(copy / "mutants").as_posix()[: -len(".meta")]
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            status = ("killed" if code in KILLED else "survived" if code in SURVIVED
                      else "no tests" if code in NO_TESTS else "not run" if code is None
                      else f"unsure (exit {code})")
            out.append(Mutant(name, rel, status))
    return out


def mutated_line(copy: Path, name: str) -> str:
    """The ``+`` lines of mutmut's diff for ``name``, joined: what an equivalence entry pins."""
    shown = subprocess.run([MUTMUT, "show", name], cwd=copy, capture_output=True, text=True)
    return " / ".join(line[1:].strip() for line in shown.stdout.splitlines()
                      if line.startswith("+") and not line.startswith("+++"))


def equivalents() -> dict[str, dict[str, str]]:
    if not EQUIVALENTS.exists():
        return {}
    data = yaml.safe_load(EQUIVALENTS.read_text()) or {}
    entries = data.get("equivalent", [])
    for i, e in enumerate(entries):
        missing = {"mutant", "line", "reason"} - set(e)
        if missing:
            raise SystemExit(f"{EQUIVALENTS}: entry {i + 1} lacks {', '.join(sorted(missing))}; "
                             "each entry needs mutant (mutmut name), line (its + line) and reason")
    return {e["mutant"]: e for e in entries}


def retest_the_living(copy: Path) -> None:
    """Forget every survivor's verdict: mutmut re-tests a mutant only when its function changed, and a
    new test must get its chance at the old survivors. Killed verdicts are kept (``--fresh`` drops all)."""
    for meta in (copy / "mutants").rglob("*.py.meta"):
        data = json.loads(meta.read_text())
        codes = data["exit_code_by_key"]
        for name, code in codes.items():
            if code in RETEST:
                codes[name] = None
        meta.write_text(json.dumps(data, indent=4))


def sweep(target: str, jobs: int, fresh: bool, only: list[str] | None = None) -> tuple[list[Mutant], float]:
    copy = ROOT / ".seamgate" / "sweep" / target
    if fresh and copy.exists():
        shutil.rmtree(copy)
    mirror(copy)
    retest_the_living(copy)
    narrow(copy, target, only)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEAM_")}
    env["OMP_NUM_THREADS"] = "1"  # one thread per worker: the machine has 2 cores
    start = time.monotonic()
    with open(copy / "mutmut.log", "w") as log:
        done = subprocess.run([MUTMUT, "run", "--max-children", str(jobs)], cwd=copy, env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    took = time.monotonic() - start
    if done.returncode != 0:
        tail = (copy / "mutmut.log").read_text(errors="replace")[-3000:]
        raise SystemExit(f"mutmut run for {target} failed (exit {done.returncode}) in {copy}:\n{tail}")
    return results(copy), took


def report(target: str, mutants: list[Mutant], took: float, equiv: dict[str, dict[str, str]]) -> int:
    """Print the score per file; return the number of unexplained survivors."""
    copy = ROOT / ".seamgate" / "sweep" / target
    unexplained = 0
    print(f"== {target}: {len(mutants)} mutants in {took:.0f} s")
    for file in sorted({m.file for m in mutants}):
        mine = [m for m in mutants if m.file == file]
        alive = [m for m in mine if m.status in ("survived", "no tests")]
        unsure = [m for m in mine if m.status not in ("killed", "survived", "no tests")]
        if unsure:
            unexplained += len(unsure)
            print(f"   {len(unsure)} mutant(s) of {file} ended unsure (pytest internal error, timeout, not run): "
                  "re-run the sweep")
        explained = []
        for m in alive:
            entry = equiv.get(m.name)
            line = mutated_line(copy, m.name)
            if entry is not None and entry["line"].strip() == line:
                explained.append(m)
            else:
                unexplained += 1
                stale = " (equivalence entry is STALE: its line no longer matches)" if entry else ""
                print(f"   SURVIVOR {m.name} [{m.status}]{stale}\n      + {line}")
        scored = len(mine) - len(explained)
        killed = sum(1 for m in mine if m.status == "killed")
        score = 100.0 * killed / scored if scored else 100.0
        print(f"   {file}: {killed}/{scored} killed = {score:.1f}% ({len(explained)} equivalent)")
    return unexplained


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="+", choices=sorted(TARGETS))
    parser.add_argument("--jobs", type=int, default=2, help="mutmut --max-children (default 2)")
    parser.add_argument("--only", help="comma-separated files of the target to mutate (default: all of them)")
    parser.add_argument("--fresh", action="store_true", help="drop the kept mirror and its verdicts: a full sweep")
    parser.add_argument("--fail-on-survivor", action="store_true", help="exit 1 when a survivor is unexplained")
    args = parser.parse_args(argv)
    if not Path(MUTMUT).exists():
        raise SystemExit(f"mutmut is not installed beside {sys.executable}: run "
                         f"'{Path(sys.executable).with_name('pip')} install \"mutmut>=3.8\"' and try again")
    equiv = equivalents()
    unexplained = 0
    for target in args.targets:
        mutants, took = sweep(target, args.jobs, args.fresh, args.only.split(",") if args.only else None)
        unexplained += report(target, mutants, took, equiv)
    return 1 if unexplained and args.fail_on_survivor else 0


if __name__ == "__main__":
    sys.exit(main())
