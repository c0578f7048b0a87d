"""The red-first judge as a table: red on the old code with exact counts, then green, or the reason why not.

Each row is a red run (the old code) and a green run (the working tree), with the verdict and the
words a user must read. A second part materializes a git ref with the new tests laid over it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.gates.model import Counts, RedSet, SourceState
from harness.judge.redfirst import ALREADY_GREEN, RefError, judge_red_first, materialize_ref
from reports.outcome import CaseOutcome, RunOutcome, Verdict
from tests.reports.fixture_projects import gate

A, B = "tests/test_new.py::test_a", "tests/test_new.py::test_b"
NEW = "tests/test_new.py"
OWED_MSG = "OWED: cuda arm needs a GPU"


def c(nodeid: str, kind: str = "passed", *, failed: int = 0, message: str = "") -> CaseOutcome:
    failed = failed or (1 if kind == "failed" else 0)
    return CaseOutcome(nodeid, kind, message, assertions_passed=1, assertions_failed=failed)  # type: ignore[arg-type]


def run(label: str, *cases: CaseOutcome, exit_code: int | None = 1, end: str = "completed", detail: str = "") -> RunOutcome:
    return RunOutcome(label, end, exit_code, cases, detail=detail)  # type: ignore[arg-type]


RED = run("old", c(A, "failed"), c(B, "failed"))
GREEN = run("new", c(A), c(B), exit_code=0)


@dataclass(frozen=True)
class Row:
    red_run: RunOutcome
    green_run: RunOutcome
    verdict: Verdict
    says: tuple[str, ...] = ()
    never: tuple[str, ...] = ()
    counts: Counts | None = Counts(cases=2, passed=0, failed=2)
    green_after: bool = True


ROWS: dict[str, Row] = {
    "red-then-green": Row(RED, GREEN, Verdict.PASS,
                          ("red-first against ref main: reds exactly tests/test_new.py (2 cases, 0 passed",
                           "; green after (2 cases, 2 passed, 2 assertions, 0 failed, exit 0)")),
    "already-green-on-the-old-code": Row(run("old", c(A), c(B), exit_code=0), GREEN, Verdict.FAIL,
                                         ("red-first against ref main: expected red but green" + ALREADY_GREEN,
                                          "tests/test_new.py::test_a, tests/test_new.py::test_b"), ("green after",)),
    "half-red-on-the-old-code": Row(run("old", c(A, "failed"), c(B)), GREEN, Verdict.FAIL,
                                    ("expected red but green" + ALREADY_GREEN + ": tests/test_new.py::test_b",
                                     "passed: expected 0, got 1", "failed: expected 2, got 1")),
    "counts-off-by-one": Row(RED, GREEN, Verdict.FAIL, ("cases: expected 3, got 2",), ("green after",),
                             counts=Counts(cases=3, passed=0, failed=2)),
    "old-code-does-not-import": Row(run("old", c(NEW, "error", message="ImportError: cannot import sub"), exit_code=2),
                                    GREEN, Verdict.ERROR, ("red-first against ref main broke import/collection/setup",
                                                           "ImportError: cannot import sub", "an error, not a red")),
    "old-code-times-out": Row(run("old", end="timeout", exit_code=None, detail="no exit after 10 s"), GREEN,
                              Verdict.TIMEOUT, ("no exit after 10 s",)),
    "old-code-owed": Row(run("old", c(A, "failed"), c(B, "failed"), c("tests/test_gpu.py::test_gpu", "owed",
                                                                     message=OWED_MSG)),
                         GREEN, Verdict.OWED, ("1 case(s) not measured: OWED: cuda arm needs a GPU",), ("green after",)),
    "still-red-after": Row(RED, run("new", c(A), c(B, "failed")), Verdict.FAIL,
                           ("not green after: tests/test_new.py::test_b",)),
    "still-red-after-both": Row(RED, run("new", c(A, "failed"), c(B, "failed")), Verdict.FAIL,
                                ("not green after: tests/test_new.py::test_a, tests/test_new.py::test_b",)),
    "red-after-not-asked-for": Row(RED, run("new", c(A), c(B, "failed")), Verdict.PASS,
                                   ("green after (2 cases, 1 passed",), green_after=False),
    "working-tree-does-not-import": Row(RED, run("new", c(NEW, "error", message="SyntaxError: bad"), exit_code=2),
                                        Verdict.ERROR, ("working tree broke import/collection/setup", "SyntaxError: bad")),
    "working-tree-setup-error": Row(RED, run("new", c(A), c(B, "error", message="fixture failed")), Verdict.ERROR,
                                    ("working tree broke import/collection/setup: tests/test_new.py::test_b",)),
    "working-tree-times-out": Row(RED, run("new", end="timeout", exit_code=None, detail="no exit after 10 s"),
                                  Verdict.TIMEOUT, ("working tree: no exit after 10 s",)),
    "working-tree-crashes": Row(RED, run("new", end="crash", exit_code=None, detail="killed by SIGKILL"),
                                Verdict.CRASH, ("working tree: crashed (killed by SIGKILL)",)),
    "working-tree-collects-nothing": Row(RED, run("new", exit_code=5), Verdict.ERROR, ("collected no tests",)),
    "xfail-after-is-not-red": Row(RED, run("new", c(A), c(B, "xfailed", failed=1), exit_code=0), Verdict.PASS,
                                  ("green after",)),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_the_red_first_judge_reads_each_row_as_the_user_must(name: str) -> None:
    row = ROWS[name]
    g = gate("rf", kind="red-first", select=(NEW,), red=RedSet(files=(NEW,)), counts=row.counts,
             green_after=row.green_after, source=SourceState(kind="ref", ref="main", overlay=(NEW,)))
    outcome = judge_red_first(g, "cpu-emulated", row.red_run, row.green_run)
    assert outcome.verdict is row.verdict, outcome.message
    for words in row.says:
        assert words in outcome.message, outcome.message
    for words in row.never:
        assert words not in outcome.message, outcome.message
    assert outcome.runs == (row.red_run, row.green_run)  # both runs are kept as the evidence
    assert (outcome.gate, outcome.arm, outcome.kind) == ("rf", "cpu-emulated", "red-first")


# ---- a git ref materialized with the new tests laid over it -------------------------------
def git(root: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(root)}
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "calc").mkdir(parents=True)
    (root / "calc" / "ops.py").write_text("OLD = 1\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_old.py").write_text("def test_old():\n    pass\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "old")
    (root / "calc" / "ops.py").write_text("NEW = 2\n")
    (root / "tests" / "test_new.py").write_text("def test_new():\n    pass\n")
    (root / "tests" / "more").mkdir()
    (root / "tests" / "more" / "test_more.py").write_text("X = 3\n")
    (root / "tests" / "more" / "__pycache__").mkdir()
    (root / "tests" / "more" / "__pycache__" / "junk.pyc").write_text("junk")
    return root


def test_a_ref_is_the_old_code_with_only_the_overlay_taken_from_the_working_tree(repo: Path, tmp_path: Path) -> None:
    dest = materialize_ref(repo, "HEAD", ["tests/test_new.py", "tests/more"], tmp_path / "old")
    assert dest == tmp_path / "old"
    assert (dest / "calc" / "ops.py").read_text() == "OLD = 1\n"  # old code, not the working tree's
    assert (dest / "tests" / "test_old.py").exists()
    assert (dest / "tests" / "test_new.py").read_text() == "def test_new():\n    pass\n"
    assert (dest / "tests" / "more" / "test_more.py").read_text() == "X = 3\n"
    assert not (dest / "tests" / "more" / "__pycache__").exists()
    assert not (dest / ".git").exists()
    assert (repo / "calc" / "ops.py").read_text() == "NEW = 2\n"  # the user's tree is untouched
    assert git(repo, "worktree", "list").count("\n") == 1


def test_an_unknown_ref_is_a_ref_error_naming_the_ref(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(RefError, match="no-such-branch"):
        materialize_ref(repo, "no-such-branch", [], tmp_path / "old")


def test_a_folder_outside_git_is_a_ref_error(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(RefError, match="git archive 'HEAD'"):
        materialize_ref(tmp_path / "plain", "HEAD", [], tmp_path / "old")


def test_an_overlay_path_missing_from_the_working_tree_is_a_ref_error_naming_it(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(RefError, match="'tests/test_gone.py' does not exist in the working tree"):
        materialize_ref(repo, "HEAD", ["tests/test_gone.py"], tmp_path / "old")


def test_the_destination_may_exist_or_need_its_parents_made(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "exists").mkdir()
    assert (materialize_ref(repo, "HEAD", [], tmp_path / "exists") / "calc" / "ops.py").read_text() == "OLD = 1\n"
    deep = materialize_ref(repo, "HEAD", [], tmp_path / "a" / "b" / "old")
    assert (deep / "calc" / "ops.py").read_text() == "OLD = 1\n"


def test_an_overlay_merges_into_a_folder_the_ref_has_and_makes_new_parent_folders(repo: Path, tmp_path: Path) -> None:
    (repo / "tests" / "deep" / "er").mkdir(parents=True)
    (repo / "tests" / "deep" / "er" / "test_x.py").write_text("Y = 4\n")
    dest = materialize_ref(repo, "HEAD", ["tests", "tests/deep/er/test_x.py"], tmp_path / "old")
    assert (dest / "tests" / "test_old.py").exists() and (dest / "tests" / "test_new.py").exists()
    assert (dest / "tests" / "deep" / "er" / "test_x.py").read_text() == "Y = 4\n"
    dest2 = materialize_ref(repo, "HEAD", ["tests/deep/er/test_x.py"], tmp_path / "old2")
    assert (dest2 / "tests" / "deep" / "er" / "test_x.py").read_text() == "Y = 4\n"


def test_git_missing_is_a_ref_error_that_says_git_could_not_run(repo: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    with pytest.raises(RefError, match="cannot run git to read ref 'HEAD'"):
        materialize_ref(repo, "HEAD", [], tmp_path / "old")


def test_git_stderr_that_is_not_utf8_still_gives_a_ref_error(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(RefError, match="git archive"):
        materialize_ref(repo, "bad\udcffref", [], tmp_path / "old")


def test_a_ref_holding_a_link_out_of_the_tree_never_writes_that_link(repo: Path, tmp_path: Path) -> None:
    (repo / "escape").symlink_to("/etc")
    git(repo, "add", "escape")
    git(repo, "commit", "-q", "-m", "link out")
    dest = tmp_path / "old"
    try:
        materialize_ref(repo, "HEAD", [], dest)
    except Exception:  # refusing the whole archive is fine; writing the link is not
        pass
    assert not (dest / "escape").is_symlink()
