"""CI step of issue 14: sweep the judges changed since the recorded sweep; fail on an unexplained survivor.

    .venv/bin/python scripts/sweep_judges.py             # what .ci/run calls
    .venv/bin/python scripts/sweep_judges.py --all       # every judge, whatever changed
    .venv/bin/python scripts/sweep_judges.py --record    # sweep every judge; when none survives, record them

The judges (``harness/judge/evaluate.py``, ``redfirst.py``, ``lane.py``, ``harness/plan/planner.py``) decide whether a
gate reads PASS; a survivor in them is a defect the suite would let through. ``tests/judges_sweep.json``
records the sha256 of each judge and of each test file the sweep reads, as of the last sweep in which
every mutant was killed or explained (``--record`` writes it). This step sweeps, with ``seamgate sweep
--fail-on-survivor``, the judges whose text differs from the record, or every judge when a test file,
the equivalents file or the sweep itself differs (or no record exists). Nothing changed: nothing to
sweep, exit 0. ``seamgate sweep`` keeps its cache in ``.seamgate/sweep-cache``, so on a machine that
swept before only the changed functions' mutants run; a fresh CI machine sweeps the changed judges whole.
Equivalents: ``tests/equivalent_mutants.yaml``. Exit: the sweep's (1 for an unexplained survivor).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEAMGATE = str(Path(sys.executable).with_name("seamgate"))
JUDGES = ("harness/judge/evaluate.py", "harness/judge/redfirst.py", "harness/judge/lane.py", "harness/plan/planner.py")
TESTS = ("tests/harness/test_judge_evaluate.py", "tests/harness/test_judge_redfirst.py",
         "tests/harness/test_judge_lane.py", "tests/harness/test_judge_planner.py", "tests/harness/test_evaluate.py",
         "tests/harness/test_redfirst_collection.py", "tests/harness/test_judge_collection_errors.py",
         "tests/harness/test_expected_node_ids_are_exact.py", "tests/harness/test_red_first_working_tree_is_judged_whole.py",
         "tests/harness/test_lane_fingerprints_compare_exactly.py",
         "tests/harness/test_long_id_lists_are_summarized.py")
EQUIVALENTS = "tests/equivalent_mutants.yaml"
#: When these change, every judge is swept again (the selection, the explanations, the sweep itself).
EVERYTHING = (*TESTS, EQUIVALENTS, "harness/sweep/sweep.py", "harness/sweep/mutants.py", "harness/sweep/pytest_sweep.py")
RECORD = ROOT / "tests" / "judges_sweep.json"


def sha(rel: str) -> str:
    path = ROOT / rel
    if rel == EQUIVALENTS and path.is_file():
        return judges_equivalents_sha(path)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"


def judges_equivalents_sha(path: Path) -> str:
    """sha256 of the judges' entries of the equivalents file only: entries for seam/ or drivers/
    mutants change nothing a judge sweep reads (they would otherwise re-sweep every judge)."""
    import yaml

    modules = tuple(rel.removesuffix(".py").replace("/", ".") + "." for rel in JUDGES)
    try:
        entries = yaml.safe_load(path.read_text(encoding="utf-8")).get("equivalent") or []
    except (OSError, ValueError, AttributeError, yaml.YAMLError):
        return hashlib.sha256(path.read_bytes()).hexdigest()  # unreadable: any change re-sweeps
    mine = [e for e in entries if isinstance(e, dict) and str(e.get("mutant", "")).startswith(modules)]
    return hashlib.sha256(json.dumps(mine, sort_keys=True).encode()).hexdigest()


def to_sweep(record: dict[str, str]) -> tuple[list[str], str]:
    """The judges to sweep and why."""
    changed = [rel for rel in EVERYTHING if record.get(rel) != sha(rel)]
    if not record:
        return list(JUDGES), f"no record in {RECORD.relative_to(ROOT)}"
    if changed:
        return list(JUDGES), f"changed since the recorded sweep: {', '.join(changed)}"
    judges = [rel for rel in JUDGES if record.get(rel) != sha(rel)]
    return judges, (f"judges changed since the recorded sweep: {', '.join(judges)}" if judges else "")


def sweep(judges: list[str], jobs: int) -> int:
    argv = [SEAMGATE, "--project", str(ROOT), "sweep", *judges, "--equivalents", EQUIVALENTS,
            "--fail-on-survivor", "--jobs", str(jobs)]
    for test in TESTS:
        argv += ["--tests", test]
    print("+ " + " ".join(argv[1:]), flush=True)
    return subprocess.run(argv, cwd=ROOT).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="sweep every judge, whatever changed")
    parser.add_argument("--record", action="store_true",
                        help="sweep every judge and, when no survivor is left unexplained, write the record")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    try:
        record = json.loads(RECORD.read_text(encoding="utf-8"))["sha256"]
    except (OSError, ValueError, KeyError):
        record = {}
    judges, why = (list(JUDGES), "--all") if args.all or args.record else to_sweep(record)
    if not judges:
        print(f"judges sweep: the judges, their tests and the equivalents are as recorded in "
              f"{RECORD.relative_to(ROOT)}: nothing to sweep")
        return 0
    print(f"judges sweep: {why}", flush=True)
    code = sweep(judges, args.jobs)
    if args.record and code == 0:
        RECORD.write_text(json.dumps({"sha256": {rel: sha(rel) for rel in (*JUDGES, *EVERYTHING)}}, indent=1,
                                     sort_keys=True) + "\n", encoding="utf-8")
        print(f"recorded {RECORD.relative_to(ROOT)}")
    return code


if __name__ == "__main__":
    sys.exit(main())
