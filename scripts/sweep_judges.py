"""CI step of issues 14 and 28: sweep each group's files changed since its recorded sweep; fail on an unexplained survivor.

    .venv/bin/python scripts/sweep_judges.py                   # what .ci/run calls: every group
    .venv/bin/python scripts/sweep_judges.py --group reuse     # one group
    .venv/bin/python scripts/sweep_judges.py --all             # every file of the group(s), whatever changed
    .venv/bin/python scripts/sweep_judges.py --record          # sweep every file; when none survives, record them
    .venv/bin/python scripts/sweep_judges.py --rehash          # a record of raw bytes rewritten by statements

Three groups of files decide what a gate reads, and a survivor in either is a defect the suite would let
through as a false PASS:

- ``judges`` (issue 14): ``harness/judge/evaluate.py``, ``redfirst.py``, ``lane.py``,
  ``harness/plan/planner.py`` decide whether a gate reads PASS, ``harness/exit_mapping.py`` which exit code a
  run gives and ``harness/rows/time_limits.py`` when a row times out; record ``tests/judges_sweep.json``.
- ``reuse`` (issue 28): the code that decides what is NOT run and what is REUSED -- reach
  (``harness/reach/reach.py``, ``name_reach.py``), cells carried (``harness/reach/incremental.py``),
  rows reused (``harness/results/reuse.py``), the matrix's selections and inferred cells
  (``harness/plan/matrix.py``) and the platform arms and provenance (``harness/results/platforms.py``);
  record ``tests/reuse_sweep.json``;
- ``evidence`` (issue 28): ``harness/results/evidence.py``, which turns a GPU arm PASS, OWED or STALE
  from another machine's record; record ``tests/evidence_sweep.json``.

Each record holds the sha256 of the group's files and of each test file its sweep reads, as of the
last sweep in which every mutant was killed or explained (``--record`` writes it). A Python file is hashed by its
statements (``harness/results/source_hash.py``: without comments, docstrings and blank lines, as GPU evidence
hashes it): a mutant and the cases that kill it are statements, so a comment edit re-sweeps nothing; what the
equivalence entries pin (a mutant's whole line, an inline comment included) is recorded beside (``pins_sha``). A record
written before (``"hash"`` absent: the raw bytes) is read as it was written; ``--rehash`` rewrites it by
statements, only while every file is still as recorded (else it names them and changes nothing). This step sweeps,
with ``seamgate sweep --fail-on-survivor``, the files of a group whose text differs from its record,
or every file of the group when one of its test files, its entries of the equivalents file or the
sweep itself differs (or no record exists). Nothing changed: nothing to sweep, exit 0. ``seamgate
sweep`` keeps its outcomes as rows of its run folders (``.seamgate/runs``), so on a machine that swept before only the
changed functions' mutants run; a fresh CI machine sweeps the changed files whole.
Equivalents: ``tests/equivalent_mutants.yaml``. Exit: the first non-zero exit of a group's sweep
(1 for an unexplained survivor), every group swept either way; with ``--rehash``, 3 when a record cannot be
rewritten (a file differs from it, or there is none).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.results.source_hash import normalized  # noqa: E402

SEAMGATE = str(Path(sys.executable).with_name("seamgate"))
EQUIVALENTS = "tests/equivalent_mutants.yaml"
#: The sweep's own code: a change there re-sweeps every group (its pool and its time limits are the gates' too).
SWEEP_CODE = ("harness/sweep/sweep.py", "harness/sweep/mutants.py", "harness/sweep/pytest_sweep.py",
              "harness/rows/pool.py", "harness/rows/time_limits.py")
#: How a record's files are hashed (its ``"hash"`` key): a Python file by its statements (what ``--record`` writes);
#: ``bytes``, the raw file, is how records without the key were written.
STATEMENTS, BYTES = "statements", "bytes"
#: ``--rehash`` could not rewrite a record (a file differs from it, or there is none).
REHASH_REFUSED = 3


class Group(NamedTuple):
    """Files swept together over one selection, with the record of their last clean sweep (a NamedTuple:
    this script is loaded by path, outside ``sys.modules``, where a dataclass cannot resolve its annotations)."""

    #: The name ``--group`` takes.
    name: str
    #: The files mutated.
    files: tuple[str, ...]
    #: The selection the sweep reads (``--tests``), fast unit tests first.
    tests: tuple[str, ...]
    #: The record file, relative to the project.
    record: str

    @property
    def everything(self) -> tuple[str, ...]:
        """When these change, every file of the group is swept again (the selection, what it reads of tests/
        and its conftest.py files, the explanations, the sweep)."""
        return (*self.tests, *support_files(self.tests), EQUIVALENTS, *SWEEP_CODE)

    @property
    def record_path(self) -> Path:
        return ROOT / self.record


def support_files(tests: tuple[str, ...]) -> tuple[str, ...]:
    """What the test files ``tests`` read besides themselves: the modules of tests/ they import (and what
    those import), and every ``conftest.py`` from the project root down to each test's folder."""
    found: list[str] = []
    todo = list(tests)
    while todo:
        rel = todo.pop()
        path = ROOT / rel
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tests":
                module = node.module.replace(".", "/")
                for candidate in (f"{module}.py", f"{module}/__init__.py"):
                    if (ROOT / candidate).is_file() and candidate not in found and candidate not in tests:
                        found.append(candidate)
                        todo.append(candidate)
    for rel in tests:
        parts = Path(rel).parent.parts
        for depth in range(len(parts) + 1):
            conftest = str(Path(*parts[:depth], "conftest.py")) if depth else "conftest.py"
            if (ROOT / conftest).is_file() and conftest not in found:
                found.append(conftest)
    return tuple(sorted(found))


JUDGES_GROUP = Group(
    name="judges",
    files=("harness/judge/evaluate.py", "harness/judge/redfirst.py", "harness/judge/lane.py", "harness/plan/planner.py",
           "harness/exit_mapping.py", "harness/rows/time_limits.py"),
    tests=("tests/harness/test_exit_mapping.py", "tests/harness/test_time_limits.py", "tests/harness/test_judge_evaluate.py", "tests/harness/test_judge_redfirst.py",
           "tests/harness/test_judge_lane.py", "tests/harness/test_judge_planner.py", "tests/harness/test_evaluate.py",
           "tests/harness/test_redfirst_collection.py", "tests/harness/test_judge_collection_errors.py",
           "tests/harness/test_expected_node_ids_are_exact.py", "tests/harness/test_red_first_working_tree_is_judged_whole.py",
           "tests/harness/test_lane_fingerprints_compare_exactly.py", "tests/harness/test_long_id_lists_are_summarized.py"),
    record="tests/judges_sweep.json",
)
REUSE_GROUP = Group(
    name="reuse",
    # The files swept clean and recorded; the rest of issue 28's list is REUSE_OWED below.
    files=("harness/results/reuse.py", "harness/plan/matrix.py", "harness/reach/incremental.py",
           "harness/results/platforms.py", "harness/reach/name_reach.py", "harness/reach/reach.py"),
    # Unit tests only: a case that starts a child (the end-to-end runs of test_kept.py, test_reuse_partial.py,
    # test_reuse_false_passes.py) has unknown reach, so every surviving mutant would run it, each starting
    # a fork server of its own (the first try with them, 2026-12-03, ran 12 min on reuse.py alone, unfinished).
    tests=("tests/harness/test_reuse_digest.py", "tests/harness/test_incremental.py", "tests/harness/test_reach.py",
           "tests/harness/test_matrix_selections.py", "tests/harness/test_platform_arms.py",
           "tests/harness/test_matrix.py", "tests/harness/test_name_reach.py", "tests/harness/test_platforms.py",
           "tests/harness/test_selection_is_grouped_by_folder.py"),
    record="tests/reuse_sweep.json",
)
EVIDENCE_GROUP = Group(
    name="evidence",
    # What turns a GPU arm PASS, OWED or STALE from another machine's record (issue 28): a group of its own, so
    # a change there re-sweeps these 321 mutants (about a minute) and not the reuse group's 1,153.
    files=("harness/results/evidence.py",),
    tests=("tests/harness/test_evidence_hash.py", "tests/harness/test_evidence_records.py",
           "tests/harness/test_evidence_hash_format.py"),
    record="tests/evidence_sweep.json",
)
#: Issue 28's files not in a group yet (docs/mutation-score.md): none since reach.py joined the reuse group.
#: The issue's planner.py (the union of cases) is swept in the judges group.
REUSE_OWED: tuple[str, ...] = ()
GROUPS = {group.name: group for group in (JUDGES_GROUP, REUSE_GROUP, EVIDENCE_GROUP)}

# The judges group under the names this script had before groups (scripts/planted_defects.py reads TESTS).
JUDGES, TESTS, EVERYTHING, RECORD = JUDGES_GROUP.files, JUDGES_GROUP.tests, JUDGES_GROUP.everything, JUDGES_GROUP.record_path


def sha(rel: str, group: Group = JUDGES_GROUP, reading: str = STATEMENTS) -> str:
    """The file's hash as a record of ``reading`` holds it (``STATEMENTS`` or ``BYTES``)."""
    path = ROOT / rel
    if rel == EQUIVALENTS and path.is_file():
        return group_equivalents_sha(path, group)
    if not path.is_file():
        return "missing"
    data = path.read_bytes()
    return hashlib.sha256(normalized(rel, data) if reading == STATEMENTS else data).hexdigest()


def group_equivalents_sha(path: Path, group: Group = JUDGES_GROUP) -> str:
    """sha256 of the group's entries of the equivalents file only: entries for another group's, seam/'s
    or drivers/' mutants change nothing this group's sweep reads (they would otherwise re-sweep it whole)."""
    import yaml

    modules = tuple(rel.removesuffix(".py").replace("/", ".") + "." for rel in group.files)
    try:
        entries = yaml.safe_load(path.read_text(encoding="utf-8")).get("equivalent") or []
    except (OSError, ValueError, AttributeError, yaml.YAMLError):
        return hashlib.sha256(path.read_bytes()).hexdigest()  # unreadable: any change re-sweeps
    mine = [e for e in entries if isinstance(e, dict) and str(e.get("mutant", "")).startswith(modules)]
    return hashlib.sha256(json.dumps(mine, sort_keys=True).encode()).hexdigest()


def judges_equivalents_sha(path: Path) -> str:
    """The judges group's ``group_equivalents_sha`` (the name before groups)."""
    return group_equivalents_sha(path, JUDGES_GROUP)


#: (file, its bytes) -> the ``+`` lines of each of its mutants, by id: generated once a process.
_MADE: dict[tuple[str, bytes], dict[str, str]] = {}


#: The equivalents file's bytes -> the mutants it names: read once a process, not once a swept file.
_NAMED: dict[bytes, tuple[str, ...]] = {}


def _entry_ids() -> tuple[str, ...]:
    from harness.sweep.equivalents import load_equivalents

    path = ROOT / EQUIVALENTS
    if not path.is_file():
        return ()
    data = path.read_bytes()
    if data not in _NAMED:
        _NAMED[data] = tuple(load_equivalents(path))
    return _NAMED[data]


def pins_sha(rel: str) -> str:
    """sha256 of what the equivalence entries of ``rel``'s mutants pin, as its mutants write it now (``added_lines``).
    The statements hash hides one change a sweep sees: an inline comment on a mutated line is part of the mutant's
    line, so an entry pinning it would read STALE and its survivor unexplained at the next sweep. Mutants are
    generated (mutmut's naming), none is run; ``"none"`` for a file no entry names."""
    from harness.sweep.mutants import added_lines, generate

    source = ROOT / rel
    prefix = rel.removesuffix(".py").replace("/", ".") + "."
    named = sorted(m for m in _entry_ids() if m.startswith(prefix))
    if not named or not source.is_file():
        return "none"
    key = (rel, source.read_bytes())
    if key not in _MADE:
        _MADE[key] = {m.id: added_lines(m.diff) for m in generate(ROOT, rel)}
    return hashlib.sha256(json.dumps([[m, _MADE[key].get(m)] for m in named]).encode()).hexdigest()


def to_sweep(record: dict[str, str], group: Group = JUDGES_GROUP, reading: str = STATEMENTS,
             pins: dict[str, str] | None = None) -> tuple[list[str], str]:
    """The files of ``group`` to sweep and why, against a record whose hashes are of ``reading`` (by statements: with
    its ``pins``, each file's ``pins_sha``; a file without one is swept)."""
    changed = [rel for rel in group.everything if record.get(rel) != sha(rel, group, reading)]
    if not record:
        return list(group.files), f"no record in {group.record}"
    if changed:
        return list(group.files), f"changed since the recorded sweep: {', '.join(changed)}"
    files = [rel for rel in group.files if record.get(rel) != sha(rel, group, reading)]
    if reading == STATEMENTS:  # the same statements: what the entries pin may still differ (``pins_sha``)
        pinned = [rel for rel in group.files if rel not in files and (pins or {}).get(rel) != pins_sha(rel)]
        if pinned:
            return files + pinned, (f"files changed since the recorded sweep: {', '.join(files + pinned)}"
                                    f" ({', '.join(pinned)}: a line an equivalence entry pins)")
    return files, (f"files changed since the recorded sweep: {', '.join(files)}" if files else "")


def sweep(files: list[str], jobs: int, group: Group = JUDGES_GROUP) -> int:
    argv = [SEAMGATE, "--project", str(ROOT), "sweep", *files, "--equivalents", EQUIVALENTS,
            "--fail-on-survivor", "--jobs", str(jobs)]
    for test in group.tests:
        argv += ["--tests", test]
    print("+ " + " ".join(argv[1:]), flush=True)
    return subprocess.run(argv, cwd=ROOT).returncode


class Record(NamedTuple):
    """A group's record: its hashes, how they were taken, and (by statements) each file's ``pins_sha``."""

    sha256: dict[str, str]
    reading: str
    pins: dict[str, str]


def read_record(group: Group) -> Record:
    """The group's record (no hashes if none)."""
    try:
        data = json.loads(group.record_path.read_text(encoding="utf-8"))
        return Record(dict(data["sha256"]), data.get("hash", BYTES), dict(data.get("pins", {})))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return Record({}, STATEMENTS, {})


def write_record(group: Group) -> None:
    hashes = {rel: sha(rel, group) for rel in (*group.files, *group.everything)}
    pins = {rel: pins_sha(rel) for rel in group.files}
    group.record_path.write_text(json.dumps({"hash": STATEMENTS, "sha256": hashes, "pins": pins}, indent=1,
                                            sort_keys=True) + "\n", encoding="utf-8")


def rehash(group: Group) -> int:
    """Rewrite a record of raw bytes by statements, only while every file it covers is as it recorded."""
    hashes, reading, _ = read_record(group)
    if not hashes:
        print(f"{group.name}: no record in {group.record} to rehash: sweep it with --record")
        return REHASH_REFUSED
    if reading == STATEMENTS:
        print(f"{group.name}: {group.record} is already hashed by statements")
        return 0
    files, why = to_sweep(hashes, group, reading)
    if files:
        print(f"{group.name}: {group.record} not rehashed, {why}; sweep it with --record instead")
        return REHASH_REFUSED
    write_record(group)
    print(f"{group.name}: {group.record} rehashed by statements (every file as recorded)")
    return 0


def run_group(group: Group, *, every: bool, record: bool, jobs: int) -> int:
    """Sweep one group (what changed, or every file) and, with ``record`` and no survivor, write its record."""
    if every or record:
        files, why = list(group.files), "--all"
    else:
        record_now = read_record(group)
        files, why = to_sweep(record_now.sha256, group, record_now.reading, record_now.pins)
    if not files:
        print(f"{group.name} sweep: the files, their tests and the equivalents are as recorded in "
              f"{group.record}: nothing to sweep")
        return 0
    print(f"{group.name} sweep: {why}", flush=True)
    code = sweep(files, jobs, group)
    if record and code == 0:
        write_record(group)
        print(f"recorded {group.record}")
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", choices=sorted(GROUPS), action="append",
                        help="sweep this group only (repeatable; default: every group)")
    parser.add_argument("--all", action="store_true", help="sweep every file of the group(s), whatever changed")
    parser.add_argument("--record", action="store_true",
                        help="sweep every file and, when no survivor is left unexplained, write the group's record")
    parser.add_argument("--rehash", action="store_true",
                        help="sweep nothing; rewrite each record of raw bytes by statements, where every file is as "
                             "recorded (exit 3 where one is not)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    if args.rehash:
        codes = [rehash(GROUPS[name]) for name in (args.group or list(GROUPS))]
        return next((code for code in codes if code != 0), 0)
    codes = [run_group(GROUPS[name], every=args.all, record=args.record, jobs=args.jobs)
             for name in (args.group or list(GROUPS))]
    return next((code for code in codes if code != 0), 0)


if __name__ == "__main__":
    sys.exit(main())
