"""Red-first: the named tests are red against the old code with exact counts, then green.

The old code is a named mutation (materialized by ``mutations.offtree``) or a git ref. A ref's tree
is written with ``git archive <ref>`` into a temporary folder, never with ``git worktree add``: a
runner killed by SIGKILL can leave a temporary folder behind, but never an entry in the user's
worktree list. The ``overlay`` paths (the new tests) are then copied from the working tree over it.

A new test that is already green against the old code FAILS red-first, and the message says so: a
test that cannot fail before the change cannot prove the change.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from dataclasses import replace
from pathlib import Path
from typing import Iterable

from harness.evaluate import judge_red, red_of_baseline, trouble
from harness.model import Gate
from reports.outcome import ArmOutcome, RunOutcome, Verdict, count_phrase


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


def judge_red_first(gate: Gate, arm: str, red_run: RunOutcome, green_run: RunOutcome) -> ArmOutcome:
    """Red against the old code with the exact counts, then all green on the working tree."""
    red = judge_red(gate, arm, red_run, what=f"red-first against {gate.source.label()}", green_hint=ALREADY_GREEN)
    if red.verdict is not Verdict.PASS:
        return replace(red, runs=(red_run, green_run))
    bad = trouble(green_run, "working tree")
    if bad is not None:
        return replace(red.with_verdict(*bad), runs=(red_run, green_run))
    still_red = sorted(c.nodeid for c in red_of_baseline(green_run))
    if gate.expect.green_after and still_red:
        return replace(red.with_verdict(Verdict.FAIL, f"not green after: {', '.join(still_red)}"),
                       runs=(red_run, green_run))
    after = f"; green after ({count_phrase(green_run.cases)}, exit {green_run.exit_code})"
    return replace(red.with_verdict(Verdict.PASS, red.message + after), runs=(red_run, green_run))
