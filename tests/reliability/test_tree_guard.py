"""The user's tree is watched around every run (``harness/rows/tree_guard.py``): a test that writes into it
makes every gate that read its run an ERROR naming the files, never a PASS.

``python -m tests.reliability.test_tree_guard`` prints what the guard costs on this repository.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from harness.rows.tree_guard import TreeGuard
from reports.outcome import ArmOutcome, RunOutcome, Verdict
from tests.reliability.project import write_project

FILES = ["calc/__init__.py", "calc/ops.py", "tests/test_add.py", "pyproject.toml"]


def _guard(tmp_path: Path) -> tuple[Path, TreeGuard]:
    project = write_project(tmp_path / "project")
    copy = tmp_path / "copy"
    shutil.copytree(project, copy)
    return project, TreeGuard(project, FILES, original=lambda rel: copy / rel)


def _pass(label: str) -> ArmOutcome:
    return ArmOutcome("g", "cpu-emulated", Verdict.PASS, "reds exactly x", runs=(RunOutcome(label, "completed", 1),))


def test_a_write_an_added_file_and_a_removal_during_a_run_are_charged_to_that_run(tmp_path: Path) -> None:
    project, guard = _guard(tmp_path)
    with guard.watch("mutation m cpu-emulated"):
        with open(project / "calc/ops.py", "a") as fh:
            fh.write("# scribbled\n")
        (project / "calc/new.py").write_text("")
        (project / "tests/test_add.py").unlink()
    with guard.watch("mutation other cpu-emulated"):
        pass
    assert guard.touched == {"mutation m cpu-emulated": ("added calc/new.py", "changed calc/ops.py",
                                                       "removed tests/test_add.py")}


def test_a_touch_that_keeps_the_bytes_is_not_a_change_and_the_runners_own_folder_is_not_the_users(
        tmp_path: Path) -> None:
    project, guard = _guard(tmp_path)
    with guard.watch("run"):
        os.utime(project / "calc/ops.py", ns=(1, 1))
        (project / ".seamgate").mkdir()
    assert guard.touched == {}


def test_the_gate_that_read_the_run_is_an_error_naming_the_file_never_a_pass(tmp_path: Path) -> None:
    project, guard = _guard(tmp_path)
    with guard.watch("mutation m cpu-emulated"):
        (project / "calc/ops.py").write_text("changed\n")
    judged = guard.verdict(_pass("mutation m cpu-emulated"), [])
    assert judged.verdict is Verdict.ERROR
    assert judged.message.startswith("the project tree itself changed while this gate's runs ran: changed calc/ops.py")
    assert guard.verdict(_pass("mutation other cpu-emulated"), []).verdict is Verdict.PASS


def test_a_baseline_run_that_changed_the_tree_taints_every_gate(tmp_path: Path) -> None:
    project, guard = _guard(tmp_path)
    with guard.watch("baseline cpu-emulated tests"):
        (project / "pyproject.toml").write_text("")
    assert guard.verdict(_pass("mutation other cpu-emulated"), []).verdict is Verdict.ERROR


def test_the_runs_own_output_folder_inside_the_project_is_not_a_change(tmp_path: Path) -> None:
    # `seamgate run --output results` writes its logs into the project while the runs run.
    project = write_project(tmp_path / "project")
    (project / "results").mkdir()
    guard = TreeGuard(project, FILES + ["results/old.txt"], ignore=project / "results")
    with guard.watch("run"):
        (project / "results" / "runs").mkdir()
        (project / "results.txt").write_text("")
    assert guard.touched == {"run": ("added results.txt",)}


def cost(root: Path, rounds: int = 50) -> str:
    """What the guard costs on ``root``: the listing once, then one comparison (two per run)."""
    started = time.perf_counter()
    guard = TreeGuard.start(root)
    listing = time.perf_counter() - started
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        guard.changes()
        times.append(time.perf_counter() - started)
    return (f"{len(guard.files)} files in {len(guard.folders)} folders: start {listing * 1000:.0f} ms once per "
            f"invocation, one comparison {statistics.median(times) * 1000:.1f} ms median "
            f"({max(times) * 1000:.1f} ms max over {rounds}), two per pytest run")


if __name__ == "__main__":
    print(cost(Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()))


def test_what_a_run_wrote_into_the_users_tree_is_undone_and_the_error_says_both(tmp_path: Path) -> None:
    project, guard = _guard(tmp_path)
    before = {rel: (project / rel).read_bytes() for rel in FILES}
    mode = (project / "calc/ops.py").stat().st_mode
    with guard.watch("mutation m cpu-emulated"):
        with open(project / "calc/ops.py", "a") as fh:
            fh.write("# scribbled\n")
        (project / "calc/new.py").write_text("x = 1\n")
        (project / "tests/test_add.py").unlink()
    assert {rel: (project / rel).read_bytes() for rel in FILES} == before
    assert (project / "calc/ops.py").stat().st_mode == mode
    assert not (project / "calc/new.py").exists()
    judged = guard.verdict(_pass("mutation m cpu-emulated"), [])
    assert judged.verdict is Verdict.ERROR
    assert "seamgate removed calc/new.py (created during the run)" in judged.message
    assert "restored calc/ops.py, tests/test_add.py from the snapshot taken before the run" in judged.message
    assert "restored nothing" not in judged.message
    with guard.watch("mutation other cpu-emulated"):
        pass
    assert guard.verdict(_pass("mutation other cpu-emulated"), []).verdict is Verdict.PASS


def test_nothing_found_in_the_tree_is_lost_what_the_guard_removes_or_overwrites_is_kept_aside(tmp_path: Path) -> None:
    # A file edited while the run ran looks the same as one a test wrote: both are put back, and neither is lost.
    project, guard = _guard(tmp_path)
    with guard.watch("baseline cpu-emulated"):
        (project / "calc/ops.py").write_text("def add(a, b):\n    return a + b  # my edit, made during the run\n")
        (project / "calc/notes.md").write_text("written during the run\n")
        (project / "tests/test_add.py").unlink()
    aside = project / guard.aside
    assert (aside / "calc/ops.py").read_text().endswith("# my edit, made during the run\n")
    assert (aside / "calc/notes.md").read_text() == "written during the run\n"
    assert not (aside / "tests/test_add.py").exists()  # removed during the run: nothing there to keep
    message = guard.verdict(_pass("mutation m cpu-emulated"), []).message
    assert f"what it found there is kept in {guard.aside}/" in message
    assert guard.aside.startswith(".seamgate/displaced/")  # the runner's own folder: never a change itself
    with guard.watch("mutation other cpu-emulated"):
        pass
    assert guard.changes() == set()


def test_only_the_newest_displaced_folders_are_kept(tmp_path: Path) -> None:
    from harness.results.workspace import KEEP

    project, guard = _guard(tmp_path)
    displaced = project / ".seamgate" / "displaced"
    for i in range(KEEP + 2):
        (displaced / f"2020010{i:02d}T000000-1").mkdir(parents=True)
    with guard.watch("mutation m cpu-emulated"):
        (project / "calc/ops.py").write_text("scribbled\n")
    names = sorted(p.name for p in displaced.iterdir())
    assert len(names) == KEEP and names[-1] == Path(guard.aside).name  # this run's, and the newest before it
    assert "202001000T000000-1" not in names and (project / guard.aside / "calc/ops.py").read_text() == "scribbled\n"
