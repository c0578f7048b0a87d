"""Every bad gate file, catalog entry and option of the corpus gets its exit code and a message
naming the file, line or key and the fix; no traceback; the project tree is byte-identical."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from harness.exit_codes import ExitCode
from tests.reliability.corpus import ACCEPTED, CASES, TAG_MARKER, Case, problems_of, run_case
from tests.reliability.project import tree_changes, tree_snapshot, write_project


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_bad_input_gets_its_exit_code_a_message_naming_the_place_and_leaves_the_tree_alone(
        case: Case, tmp_path: Path) -> None:
    seen = run_case(case, tmp_path)
    assert problems_of(case.code, case.message, seen) == [], seen.output


def test_corpus_case_names_are_unique_and_every_code_is_an_error() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    assert all(c.code is not ExitCode.OK for c in CASES)


def test_the_tag_cases_would_leave_their_marker_if_the_tag_were_ever_constructed(tmp_path: Path) -> None:
    # The proof of "refused, not executed" must be able to fail: an unsafe loader on the same file
    # does run the command and leaves the marker the corpus looks for.
    case = next(c for c in CASES if c.name == "gate-tag-os-system")
    project = write_project(tmp_path / "project", case.files)
    case.setup(project)
    assert case.proof(project) == []
    yaml.unsafe_load((project / "gates/g.yaml").read_text())
    assert case.proof(project) == [f"the refused YAML tag executed: {tmp_path / TAG_MARKER} exists"]


def test_the_tree_helper_sees_an_added_a_removed_a_rewritten_and_a_re_moded_file(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p")
    before = tree_snapshot(project)
    (project / "calc/ops.py").write_text("changed\n")
    (project / "tests/test_mul.py").unlink()
    (project / "new.py").write_text("")
    (project / "calc/__init__.py").chmod(0o600)
    (project / ".seamgate").mkdir()
    (project / ".seamgate/run.lock").write_text("1\n")
    assert tree_changes(before, tree_snapshot(project)) == [
        "removed tests/test_mul.py", "added new.py", "changed calc/__init__.py", "changed calc/ops.py"]


@pytest.mark.parametrize("case", ACCEPTED, ids=lambda c: c.name)
def test_an_input_that_once_failed_is_now_read_as_meant(case: Case, tmp_path: Path) -> None:
    observed = run_case(case, tmp_path)
    assert observed.code == case.code and re.search(case.message, observed.first_line) and observed.unchanged, observed


def _git(project: Path, *args: str) -> str:
    import subprocess

    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "HOME": str(project.parent), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", "-c", "core.fsmonitor=false", *args], cwd=project, env=env, capture_output=True,
                          text=True, check=True).stdout


def _digest(project: Path) -> str:
    import hashlib

    snapshot = {k: v for k, v in tree_snapshot(project).items() if k != ".git" and not k.startswith(".git/")}
    return hashlib.sha256(repr(sorted(snapshot.items())).encode()).hexdigest()


@pytest.mark.parametrize("case", CASES + ACCEPTED, ids=[c.name for c in CASES + ACCEPTED])
def test_in_a_git_checkout_every_case_leaves_git_status_clean_and_the_content_digest_equal(
        case: Case, tmp_path: Path) -> None:
    """The user's tree as a real git checkout: nothing added, changed or left ignored, same digest of every file."""
    from tests.reliability.corpus import run_cli

    project = write_project(tmp_path / "project", case.files)
    if case.setup is not None:
        case.setup(project)
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "fixture")
    before = _digest(project)
    code, out, err = run_cli(project, case.args)
    assert _git(project, "status", "--porcelain", "--ignored", "--untracked-files=all") == "", out + err
    assert _digest(project) == before
