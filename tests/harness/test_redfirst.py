"""Red-first against a git ref: red with exact counts on the old code, then green on the new."""

from __future__ import annotations

import io
from pathlib import Path

from harness.gates.model import Counts, RedSet, SourceState
from harness.run.runner import RunOptions, catalog_materializer, run_gates
from reports.outcome import Verdict
from tests.reports.fixture_projects import CALC, catalog, gate, git, shared_server, tree_digest, write_project

NEW_TEST = "tests/test_sub.py"
SUB_TEST = "from calc.ops import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"


def repo(tmp_path: Path, old_ops: str) -> Path:
    root = write_project(tmp_path / "repo", {**CALC, "calc/ops.py": old_ops})
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "old")
    new_ops = CALC["calc/ops.py"] + "\n\ndef sub(a, b):\n    return a - b\n"
    write_project(root, {"calc/ops.py": new_ops, NEW_TEST: SUB_TEST})
    return root


def red_first(root: Path):
    g = gate("rf", kind="red-first", select=(NEW_TEST,), red=RedSet(files=(NEW_TEST,)),
             counts=Counts(cases=1, passed=0, failed=1), green_after=True,
             source=SourceState(kind="ref", ref="HEAD", overlay=(NEW_TEST,)))
    report, code = run_gates([g], project=root, options=RunOptions(progress=False), stdout=io.StringIO(),
                             materializer=catalog_materializer(catalog()), launcher=shared_server())
    return report.outcomes[0]


def test_a_new_test_red_on_the_old_code_and_green_on_the_new_passes_red_first(tmp_path):
    old = CALC["calc/ops.py"] + "\n\ndef sub(a, b):\n    return a + b\n"  # the bug the new test pins
    root = repo(tmp_path, old)
    before, worktrees = tree_digest(root), git(root, "worktree", "list")
    outcome = red_first(root)
    assert outcome.verdict is Verdict.PASS, outcome.message
    assert "1 case, 0 passed" in outcome.message and "green after" in outcome.message
    assert tree_digest(root) == before and git(root, "worktree", "list") == worktrees


def test_a_new_test_already_green_against_the_old_code_fails_red_first_and_says_so(tmp_path):
    old = CALC["calc/ops.py"] + "\n\ndef sub(a, b):\n    return a - b\n"  # the old code already right
    outcome = red_first(repo(tmp_path, old))
    assert outcome.verdict is Verdict.FAIL
    assert "expected red but green (already green against the old code" in outcome.message
