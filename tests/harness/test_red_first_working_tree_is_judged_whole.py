"""Red-first: the working tree's run is judged whole, and only a collection error turns into reds.

- ``green_after`` means every case of the selection is green on the working tree, not only the cases
  that were red on the old code: an older test the change broke is "not green after".
- The working tree's run is judged for trouble (timeout, crash, an error, no tests) whether or not the
  gate asks for ``green_after``: a gate never PASSes on a run that did not finish.
- ``collection_errors_are_red`` turns a COLLECTION error of a named file into reds; a setup error of
  one case of that file stays an error, and a named file's collection error that the working tree does
  not collect either stays an error even when another named file's error was turned.
- A git ref's tree is the old code with the overlay laid over it last: a test file the ref already has
  is the working tree's version, not the ref's.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from harness.gates.model import RedSet, SourceState
from harness.judge.redfirst import judge_red_first, materialize_ref
from reports.outcome import CaseOutcome, RunOutcome, Verdict
from tests.reports.fixture_projects import gate

NEW, NEW2, OLD = "tests/test_new.py", "tests/test_new2.py", "tests/test_old.py"
A, B, C, D = f"{NEW}::test_a", f"{NEW}::test_b", f"{NEW2}::test_c", f"{OLD}::test_d"
WHY = "collection failed: ImportError: cannot import name 'new_function' from 'pkg'"
REF = SourceState(kind="ref", ref="main", overlay=(NEW, NEW2))


def c(nodeid: str, kind: str = "passed", message: str = "") -> CaseOutcome:
    return CaseOutcome(nodeid, kind, message, assertions_passed=1, assertions_failed=1 if kind == "failed" else 0)  # type: ignore[arg-type]


def run(label: str, *cases: CaseOutcome, exit_code: int | None = 1, end: str = "completed",
        detail: str = "") -> RunOutcome:
    return RunOutcome(label, end, exit_code, cases, detail=detail)  # type: ignore[arg-type]


def red_first(*, red: RedSet = RedSet(files=(NEW,)), green_after: bool = True, named: tuple[str, ...] = ()):
    g = gate("rf", kind="red-first", select=("tests",), red=red, green_after=green_after, source=REF)
    return replace(g, collection_errors_are_red=named)


OLD_RED = run("old", c(A, "failed"), c(B, "failed"), c(D))


# ---- green after: the whole selection -------------------------------------------------------
def test_an_older_test_the_change_broke_is_not_green_after() -> None:
    outcome = judge_red_first(red_first(), "cpu-emulated", OLD_RED, run("new", c(A), c(B), c(D, "failed")))
    assert outcome.verdict is Verdict.FAIL, outcome.message
    assert outcome.message == "not green after: tests/test_old.py::test_d"


def test_green_after_names_every_red_of_the_working_tree_old_and_new() -> None:
    outcome = judge_red_first(red_first(), "cpu-emulated", OLD_RED, run("new", c(A), c(B, "failed"), c(D, "failed")))
    assert outcome.verdict is Verdict.FAIL
    assert outcome.message == "not green after: tests/test_new.py::test_b, tests/test_old.py::test_d"


# ---- the working tree's trouble is judged with or without green_after -------------------------
@dataclass(frozen=True)
class Trouble:
    green_run: RunOutcome
    verdict: Verdict
    says: str


TROUBLE: dict[str, Trouble] = {
    "times-out": Trouble(run("new", c(A), end="timeout", exit_code=None, detail="no exit after 10 s"),
                         Verdict.TIMEOUT, "working tree: no exit after 10 s"),
    "crashes": Trouble(run("new", c(A), end="crash", exit_code=None, detail="killed by SIGSEGV"),
                       Verdict.CRASH, "working tree: crashed (killed by SIGSEGV)"),
    "does-not-import": Trouble(run("new", c(NEW, "error", "SyntaxError: bad"), exit_code=2), Verdict.ERROR,
                               "working tree broke import/collection/setup: tests/test_new.py: SyntaxError: bad"),
    "setup-error": Trouble(run("new", c(A), c(B, "error", "fixture 'db' failed")), Verdict.ERROR,
                           "working tree broke import/collection/setup: tests/test_new.py::test_b"),
    "collects-nothing": Trouble(run("new", exit_code=5), Verdict.ERROR, "working tree: pytest collected no tests"),
}


@pytest.mark.parametrize("green_after", [True, False], ids=["green-after", "no-green-after"])
@pytest.mark.parametrize("name", list(TROUBLE))
def test_a_working_tree_run_in_trouble_is_never_a_red_first_pass(name: str, green_after: bool) -> None:
    row = TROUBLE[name]
    outcome = judge_red_first(red_first(green_after=green_after), "cpu-emulated", OLD_RED, row.green_run)
    assert outcome.verdict is row.verdict, outcome.message
    assert row.says in outcome.message, outcome.message
    assert outcome.runs == (OLD_RED, row.green_run)


# ---- only a COLLECTION error of a named file turns into reds ----------------------------------
def test_a_setup_error_of_one_case_in_a_named_file_stays_an_error() -> None:
    old = run("old", c(A, "error", "fixture 'db' not found"), c(B, "failed"), c(D))
    outcome = judge_red_first(red_first(named=(NEW,)), "cpu-emulated", old, run("new", c(A), c(B), c(D), exit_code=0))
    assert outcome.verdict is Verdict.ERROR, outcome.message
    assert "red-first against ref main broke import/collection/setup: tests/test_new.py::test_a: " \
           "fixture 'db' not found; an error, not a red" in outcome.message
    assert "collection_errors_are_red" not in outcome.message
    assert [(x.nodeid, x.kind) for x in outcome.runs[0].cases] == [(A, "error"), (B, "failed"), (D, "passed")]


def test_a_named_files_error_the_working_tree_does_not_collect_stays_an_error_beside_a_turned_one() -> None:
    old = run("old", c(NEW, "error", WHY), c(NEW2, "error", WHY), exit_code=2)
    outcome = judge_red_first(red_first(named=(NEW, NEW2)), "cpu-emulated", old, run("new", c(A), c(B), exit_code=0))
    assert outcome.verdict is Verdict.ERROR, outcome.message
    assert "broke import/collection/setup: tests/test_new2.py: collection failed: ImportError" in outcome.message
    assert [(x.nodeid, x.kind) for x in outcome.runs[0].cases] == [(A, "failed"), (B, "failed"), (NEW2, "error")]


# ---- a ref's tree: the overlay is laid over the old code, last --------------------------------
def git(root: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(root)}
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env).stdout


def test_a_test_file_the_ref_already_has_is_the_working_trees_version(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "calc").mkdir(parents=True)
    (root / "tests" / "unit").mkdir(parents=True)
    (root / "calc" / "ops.py").write_text("def sub(a, b):\n    return a + b\n")
    (root / "tests" / "test_ops.py").write_text("def test_add():\n    pass\n")
    (root / "tests" / "unit" / "test_more.py").write_text("OLD_MORE = 1\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "old")
    (root / "calc" / "ops.py").write_text("def sub(a, b):\n    return a - b\n")
    new_tests = "def test_add():\n    pass\n\n\ndef test_sub():\n    pass\n"
    (root / "tests" / "test_ops.py").write_text(new_tests)  # a new case in a file the ref has
    (root / "tests" / "unit" / "test_more.py").write_text("NEW_MORE = 2\n")

    dest = materialize_ref(root, "HEAD", ["tests/test_ops.py", "tests/unit"], tmp_path / "old")
    assert (dest / "calc" / "ops.py").read_text() == "def sub(a, b):\n    return a + b\n"  # the old code
    assert (dest / "tests" / "test_ops.py").read_text() == new_tests  # the new test, not the ref's copy
    assert (dest / "tests" / "unit" / "test_more.py").read_text() == "NEW_MORE = 2\n"
