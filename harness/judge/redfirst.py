"""Red-first: the named tests are red against the old code with exact counts, then green.

The old code is a named mutation (materialized by ``harness.project_copy``) or a git ref. A ref's tree
is written with ``git archive <ref>`` into a temporary folder, never with ``git worktree add``: a
runner killed by SIGKILL can leave a temporary folder behind, but never an entry in the user's
worktree list. The ``overlay`` paths (the new tests) are then copied from the working tree over it.

A new test that is already green against the old code FAILS red-first, and the message says so: a
test that cannot fail before the change cannot prove the change. A gate may name test files in
``collection_errors_are_red``: a collection error of such a file against the old code (the new test
imports a function the old code lacks) counts as red for each case the working tree collects from it.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from dataclasses import replace
from pathlib import Path
from typing import Iterable

from harness.gates.model import Gate
from harness.judge.evaluate import judge_red, listed, red_of_baseline, trouble
from reports.outcome import ArmOutcome, CaseOutcome, RunOutcome, Verdict, count_phrase, counted


class RefError(RuntimeError):
    """A git ref could not be materialized (unknown ref, not a git repository, git missing)."""


def materialize_ref(project_root: Path, ref: str, overlay: Iterable[str], dest: Path) -> Path:
    """Write ``ref``'s tree into ``dest``, then lay the working tree's ``overlay`` paths over it."""
    try:
        archive = subprocess.run(["git", "archive", "--format=tar", ref], cwd=project_root,
                                 capture_output=True, check=False)
    except OSError as exc:
        raise RefError(f"cannot run git to read ref {ref!r}: {exc}") from exc
    if archive.returncode != 0:
        raise RefError(f"git archive {ref!r} in {project_root} failed: {archive.stderr.decode(errors='replace').strip()}")
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(dest, filter="data")
    for rel in overlay:
        _overlay_one(project_root, dest, rel)
    return dest


def _overlay_one(project_root: Path, dest: Path, rel: str) -> None:
    source, target = project_root / rel, dest / rel
    if not source.exists():
        raise RefError(f"overlay path {rel!r} does not exist in the working tree {project_root}")
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)


#: Appended to "expected red but green" in a red-first message.
ALREADY_GREEN = " (already green against the old code: a red-first test must fail there first)"


def collection_errors_as_red(gate: Gate, red_run: RunOutcome, green_run: RunOutcome) -> tuple[RunOutcome, int]:
    """``red_run`` with each collection error of a file named in ``collection_errors_are_red`` replaced by
    one red case per case the working tree collects from that file; returns the run and how many.

    A new test that does ``from pkg import new_function`` cannot be collected against the old code:
    that is the red red-first exists to show, when the gate says so. Only a COLLECTION error of a named
    file counts (node id = the file or folder); an error the working tree shares stays an error.
    """
    named = [n.rstrip("/") for n in gate.collection_errors_are_red]
    if not named:
        return red_run, 0
    cases: list[CaseOutcome] = []
    turned = 0
    for case in red_run.cases:
        inside = case.kind == "error" and case.nodeid and "::" not in case.nodeid and \
            any(case.nodeid == n or case.nodeid.startswith(n + "/") for n in named)
        now = [c for c in green_run.cases if "::" in c.nodeid
               and (c.file == case.nodeid or c.file.startswith(case.nodeid + "/"))] if inside else []
        if not now:
            cases.append(case)
            continue
        why = case.message.removeprefix("collection failed: ")
        cases += [CaseOutcome(nodeid=c.nodeid, kind="failed", assertions_passed=None,
                              message=f"collection error against {gate.source.label()}, counted as red "
                                      f"(collection_errors_are_red): {why}") for c in now]
        turned += len(now)
    if not turned:
        return red_run, 0
    return replace(red_run, cases=tuple(cases)), turned  # exit 1 either way: an error became a failure


def judge_red_first(gate: Gate, arm: str, red_run: RunOutcome, green_run: RunOutcome) -> ArmOutcome:
    """Red against the old code with the exact counts, then all green on the working tree."""
    red_run, turned = collection_errors_as_red(gate, red_run, green_run)
    red = judge_red(gate, arm, red_run, what=f"red-first against {gate.source.label()}", green_hint=ALREADY_GREEN)
    if turned and red.verdict is Verdict.PASS:
        red = red.with_verdict(Verdict.PASS, red.message + f"; {counted(turned, 'case')} red by a collection error "
                                                            f"(collection_errors_are_red)")
    if red.verdict is not Verdict.PASS:
        return replace(red, runs=(red_run, green_run))
    bad = trouble(green_run, "working tree")
    if bad is not None:
        return replace(red.with_verdict(*bad), runs=(red_run, green_run))
    still_red = sorted(c.nodeid for c in red_of_baseline(green_run))
    if gate.expect.green_after and still_red:
        return replace(red.with_verdict(Verdict.FAIL, f"not green after: {listed(still_red)}"),
                       runs=(red_run, green_run))
    after = f"; green after ({count_phrase(green_run.cases)}, exit {green_run.exit_code})"
    return replace(red.with_verdict(Verdict.PASS, red.message + after), runs=(red_run, green_run))
