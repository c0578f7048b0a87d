"""What a kept row's digest depends on (``harness/results/reuse.py``): a row is reused only when
nothing it read changed, so every file a row's cases can depend on must be in its digest, and a row
whose reach is unknown depends on every file of the project (issue 28: a defect here is a false PASS)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
import json
import os
from pathlib import Path

import pytest

from harness.reach.reach import Reach
from harness.results.reuse import (KeptRun, KeptRuns, digest, file_hashes, files_read, load_kept_rows, run_from_data,
                                   run_to_data, write_kept_rows)
from reports.outcome import CaseOutcome, RunOutcome

A, B, C = "tests/test_a.py::test_a", "tests/test_b.py::test_b", "tests/test_c.py::test_c"
HASHES = {
    "calc/ops.py": "1", "calc/other.py": "2", "calc/child.py": "3", "calc/fixture.py": "4",
    "tests/test_a.py": "5", "tests/test_b.py": "6", "tests/test_c.py": "7",
    "conftest.py": "8", "tests/sub/conftest.py": "9", "pyproject.toml": "10", "setup.cfg": "11",
    "tests/data/table.txt": "12", "tests_extra/data.txt": "13", "docs/notes.txt": "14",
}


def reach(spawned: tuple[str, ...] = (), opened: dict[str, set[str]] | None = None,
          starters: frozenset[str] = frozenset()) -> Reach:
    """A measured run of A, B and C: A ran ``calc/ops.py`` and used fixture ``model`` (which ran
    ``calc/fixture.py``), its measured child ran ``calc/child.py``; B ran ``calc/other.py``; the files
    each context opened (none unless given; ``opened=None``: a reach recorded before reads were)."""
    files = {"calc/ops.py": {A: frozenset({2})}, "calc/other.py": {B: frozenset({5})},
             "calc/fixture.py": {"fixture:model": frozenset({3})}}
    return Reach(files=files, fixtures={A: ("model",), B: (), C: ()}, spawned=frozenset(spawned),
                 cases=frozenset({A, B, C}), children={A: {"calc/child.py": frozenset({1})}}, starters=starters,
                 opened=None if opened is None else {c: frozenset(v) for c, v in opened.items()})


def read(ids, spawned=(), select=("tests",), opened: dict[str, set[str]] | None = None,
         starters: frozenset[str] = frozenset()) -> set[str] | None:
    return files_read(reach(spawned, {} if opened is None else opened, starters), ids, HASHES, select)


def test_a_case_depends_on_what_it_its_fixtures_and_its_measured_children_ran_and_on_its_own_test_file():
    files = read([A])
    assert {"calc/ops.py", "calc/fixture.py", "calc/child.py", "tests/test_a.py"} <= files
    assert not files & {"calc/other.py", "tests/test_b.py", "tests/test_c.py"}  # B's and C's, not A's


def test_every_conftest_at_any_depth_and_pyproject_are_read_by_every_case():
    assert {"conftest.py", "tests/sub/conftest.py", "pyproject.toml"} <= read([C])


def test_a_data_file_in_a_sub_folder_of_a_selected_folder_is_read_and_one_outside_the_selection_is_not():
    assert "tests/data/table.txt" in read([C])
    assert "tests/data/table.txt" in read([C], select=("tests/",))
    assert "tests/data/table.txt" not in read([C], select=("tests/test_c.py",))
    assert not read([C]) & {"docs/notes.txt", "setup.cfg"}


def test_a_file_outside_the_selection_is_read_by_the_cases_that_opened_it_listed_its_folder_or_ran_at_import():
    assert "docs/notes.txt" in read([A], opened={A: {"docs/notes.txt"}})
    assert "docs/notes.txt" in read([A], opened={"fixture:model": {"docs/notes.txt"}})  # through a fixture it used
    assert "docs/notes.txt" in read([B], opened={B: {"docs/"}})  # B listed the folder
    assert "docs/notes.txt" in read([B], opened={"": {"docs/notes.txt"}})  # opened at import: every case's
    assert "docs/notes.txt" not in read([B], opened={A: {"docs/notes.txt"}})


def test_a_row_with_a_case_that_started_a_child_or_no_record_of_reads_reads_every_file_outside_the_selection():
    non_python = {rel for rel in HASHES if not rel.endswith(".py")}
    assert non_python <= read([A], starters=frozenset({A}))
    assert non_python <= files_read(reach(opened=None), [B], HASHES, ("tests",))
    assert "docs/notes.txt" not in read([B], starters=frozenset({A}))  # A's child, not B's


def test_a_prefix_of_a_folder_name_is_not_that_folder():
    assert "tests_extra/data.txt" not in read([C], select=("tests",))
    assert "tests_extra/data.txt" in read([C], select=("tests_extra",))


def test_a_row_holding_a_case_of_unknown_reach_reads_every_file():
    assert read([A, C], spawned=(C,)) is None  # C started an unmeasured child
    assert read([A], spawned=("fixture:model",)) is None  # through a fixture it used
    assert read([A]) is not None and read([B], spawned=("fixture:model",)) is not None
    assert read([A, "tests/test_new.py::test_new"]) is None  # a case the measured run never saw
    assert files_read(None, [A], HASHES, ("tests",)) is None  # no reach recorded


def d(label="mutation m cpu-emulated", select=("tests",), prove=False, extra="x", files=frozenset({"calc/ops.py"}),
      hashes=None) -> str:
    return digest(label, select, prove, extra, None if files is None else set(files), HASHES if hashes is None else hashes)


def test_the_digest_changes_with_the_label_the_selection_the_mode_and_the_mutated_text():
    base = d()
    assert len({base, d(label="mutation n cpu-emulated"), d(select=("tests/test_a.py",)), d(prove=True),
                d(extra="y")}) == 5
    assert d() == base  # and nothing else moves it


def test_the_digest_changes_with_a_file_it_read_and_not_with_one_it_did_not():
    assert d(hashes={**HASHES, "calc/ops.py": "changed"}) != d()
    assert d(hashes={**HASHES, "calc/other.py": "changed"}) == d()
    assert d(hashes={k: v for k, v in HASHES.items() if k != "calc/ops.py"}) != d()  # a file it read, removed


def test_a_digest_over_every_file_changes_with_any_file():
    assert d(files=None, hashes={**HASHES, "docs/notes.txt": "changed"}) != d(files=None)


def test_a_new_file_under_a_selected_folder_changes_the_digest_and_one_under_a_prefix_sibling_does_not():
    assert d(hashes={**HASHES, "tests/sub/test_new.py": "n"}) != d()
    assert d(select=("tests/",), hashes={**HASHES, "tests/sub/test_new.py": "n"}) != d(select=("tests/",))
    assert d(select=("tests/test_a.py::test_a",), hashes={**HASHES, "tests/test_a.py": "5"}) == \
        d(select=("tests/test_a.py::test_a",))
    assert d(hashes={**HASHES, "tests_extra/test_new.py": "n"}) == d()


def test_a_data_file_edited_under_the_selection_changes_the_digest_of_a_row_that_read_files_by_reach():
    files = read([C])
    assert d(files=files, hashes={**HASHES, "tests/data/table.txt": "edited"}) != d(files=files)


def run() -> RunOutcome:
    return RunOutcome(label="mutation m cpu-emulated", end="completed", exit_code=1, wall=1.5, detail="d", log="l",
                      cases=(CaseOutcome(A, "failed", message="boom", duration=0.25),
                             CaseOutcome(B, "passed", inferred=True), CaseOutcome(C, "passed", carried=True)))


def test_a_run_survives_its_json_form_unchanged():
    assert run_from_data(json.loads(json.dumps(run_to_data(run())))) == run()


def test_kept_rows_read_back_as_written_and_nothing_when_absent_or_unreadable(tmp_path: Path):
    assert load_kept_rows(None) == {} and load_kept_rows(tmp_path) == {}
    rows = {"baseline cpu-emulated": {"digest": "d1", "run": run_to_data(run())}}
    write_kept_rows(tmp_path, rows, {"calc/ops.py": "1"})
    assert load_kept_rows(tmp_path) == rows
    kept = json.loads((tmp_path / "rows.json").read_text())
    assert kept["files"] == {"calc/ops.py": "1"} and kept["schema"] == 1
    write_kept_rows(tmp_path, rows)
    assert json.loads((tmp_path / "rows.json").read_text())["files"] == {}
    (tmp_path / "rows.json").write_text("{not json")
    assert load_kept_rows(tmp_path) == {}
    (tmp_path / "rows.json").write_text('{"schema": 1}')
    assert load_kept_rows(tmp_path) == {}


def test_file_hashes_are_the_sha256_of_every_project_file_but_seamgates_own(tmp_path: Path):
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc/ops.py").write_text("x = 1\n")
    (tmp_path / ".seamgate/runs").mkdir(parents=True)
    (tmp_path / ".seamgate/runs/rows.json").write_text("{}")
    assert file_hashes(tmp_path) == {"calc/ops.py": hashlib.sha256(b"x = 1\n").hexdigest()}


def keep(root: Path, name: str, rows: dict, when: int) -> Path:
    folder = root / ".seamgate" / "runs" / name
    folder.mkdir(parents=True)
    write_kept_rows(folder, rows)
    os.utime(folder / "rows.json", ns=(when, when))
    return folder


def row(digest_: str, **more) -> dict:
    return {"digest": digest_, "run": run_to_data(run()), **more}


def test_kept_runs_are_read_latest_first_then_newest_written_first(tmp_path: Path):
    old = keep(tmp_path, "z-old", {"r": row("1")}, 1_000_000_000)
    new = keep(tmp_path, "a-new", {"r": row("2")}, 3_000_000_000)
    latest = keep(tmp_path, "m-latest", {"r": row("3")}, 2_000_000_000)
    (tmp_path / ".seamgate/runs/empty").mkdir()  # no rows.json: not a kept run
    (tmp_path / ".seamgate/runs/latest").symlink_to(latest.name)
    assert [r.folder.name for r in KeptRuns.read(tmp_path).runs] == [latest.name, new.name, old.name]
    os.unlink(tmp_path / ".seamgate/runs/latest")
    assert [r.folder.name for r in KeptRuns.read(tmp_path).runs] == [new.name, latest.name, old.name]


def test_a_row_is_taken_from_the_newest_kept_run_that_holds_one_accepted(tmp_path: Path):
    newer = keep(tmp_path, "b", {"r": row("new", select=["tests"]), "no-run": {"digest": "x"}}, 2_000_000_000)
    older = keep(tmp_path, "a", {"r": row("old", select=["tests/test_a.py"]), "s": row("s")}, 1_000_000_000)
    (older / "reach.json").write_text("{}")
    runs = KeptRuns.read(tmp_path)
    assert runs.newest("r").folder == newer and runs.newest("r").data["digest"] == "new"
    assert runs.newest("r", lambda r: r.get("select") == ["tests/test_a.py"]).folder == older
    assert runs.newest("r", having="reach.json").folder == older  # the newer keeps no reach
    assert runs.newest("r", lambda r: False) is None and runs.newest("missing") is None
    assert runs.newest("no-run") is None  # a row without its run is no row
    assert runs.matching("r", "old").folder == older and runs.matching("r", "new").folder == newer
    assert runs.matching("r", "other") is None and runs.matching("s", "s").folder == older


def test_a_kept_run_reads_its_snapshot_and_its_reach_files(tmp_path: Path):
    folder = keep(tmp_path, "a", {"r": row("1")}, 1_000_000_000)
    write_kept_rows(folder, {"r": row("1")}, {"calc/ops.py": "h"})
    (folder / "sources.json").write_text(json.dumps({"calc/ops.py": "text"}))
    (folder / "reach.json").write_text(json.dumps({"cases": [A]}))
    kept = KeptRun(folder)
    assert kept.rows["r"]["digest"] == "1"
    assert kept.snapshot.hashes == {"calc/ops.py": "h"} and kept.snapshot.sources == {"calc/ops.py": "text"}
    assert kept.reach("reach.json") == {"cases": [A]} and kept.reach("missing.json") is None
    (folder / "bad.json").write_text("{")
    assert kept.reach("bad.json") is None
    (folder / "reach.json").write_text("{}")
    assert kept.reach("reach.json") == {"cases": [A]}  # read once: every carried row asks for the same file


# ---- survivors of the first sweep of harness/results/reuse.py (issue 28), killed ---------------------------


def test_a_tracked_file_deleted_from_the_tree_has_no_hash_and_does_not_stop_the_hashing(tmp_path: Path):
    import subprocess

    (tmp_path / "calc").mkdir()
    (tmp_path / "calc/ops.py").write_text("x = 1\n")
    (tmp_path / "calc/gone.py").write_text("y = 1\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    (tmp_path / "calc/gone.py").unlink()  # git still lists it
    assert set(file_hashes(tmp_path)) == {"calc/ops.py"}


def test_a_case_the_reach_records_no_fixtures_for_still_depends_on_its_own_files():
    bare = Reach(files={"calc/ops.py": {A: frozenset({2})}}, fixtures={}, spawned=frozenset(), cases=frozenset({A}))
    assert {"calc/ops.py", "tests/test_a.py"} <= files_read(bare, [A], HASHES, ("tests",))


def test_a_case_in_a_class_depends_on_its_test_file():
    in_class = "tests/test_b.py::TestB::test_b"
    r = Reach(files={}, fixtures={}, spawned=frozenset(), cases=frozenset({in_class}))
    files = files_read(r, [in_class], HASHES, ("tests",))
    assert "tests/test_b.py" in files and not any("::" in rel for rel in files)


def test_a_row_selecting_node_ids_depends_on_their_file_being_there():
    for entry in ("tests/test_a.py::test_a", "tests/test_a.py::TestA::test_a"):
        without = {k: v for k, v in HASHES.items() if k != "tests/test_a.py"}
        assert d(select=(entry,), hashes=without) != d(select=(entry,))


def test_a_folder_whose_name_ends_in_x_covers_only_itself():
    hashes = {**HASHES, "tests/fooX/data.txt": "a", "tests/foo/data.txt": "b"}
    files = files_read(reach(opened={}), [C], hashes, ("tests/fooX",))
    assert "tests/fooX/data.txt" in files and "tests/foo/data.txt" not in files


def test_a_run_kept_without_cases_reads_back_with_none():
    assert run_from_data({"label": "r", "end": "crashed", "exit_code": None}).cases == ()


def test_without_a_readable_runs_folder_no_run_is_kept(tmp_path: Path, monkeypatch):
    from harness.results import reuse

    monkeypatch.setattr(reuse, "runs_root", lambda project: tmp_path / "no-such-folder")
    assert KeptRuns.read(tmp_path).runs == ()


def test_a_row_that_may_read_any_file_outside_the_selection_still_reads_only_its_own_python_files():
    files = read([A], starters=frozenset({A}))
    assert "calc/other.py" not in files and "tests/test_b.py" not in files  # B's code: no input of A's


def test_a_case_that_ran_the_function_that_opened_a_file_reads_it_too():
    opens = Reach(files={"calc/ops.py": {A: frozenset({2}), B: frozenset({2, 9})}}, fixtures={A: (), B: ()},
                  spawned=frozenset(), cases=frozenset({A, B}), starters=frozenset(),
                  opened={B: frozenset({"docs/notes.txt"})}, open_regions=(("calc/ops.py", 1, 2, B),))
    assert "docs/notes.txt" in files_read(opens, [A], HASHES, ("tests",))  # A ran lines 1-2, where B opened it
    edge = replace(opens, files={"calc/ops.py": {A: frozenset({1}), B: frozenset({2})}})
    assert "docs/notes.txt" in files_read(edge, [A], HASHES, ("tests",))  # the region's first line counts
    edge = replace(opens, files={"calc/ops.py": {A: frozenset({2}), B: frozenset({1})}}, open_regions=(("calc/ops.py", 1, 2, B),))
    assert "docs/notes.txt" in files_read(edge, [A], HASHES, ("tests",))  # and its last
    apart = replace(opens, files={"calc/ops.py": {A: frozenset({3}), B: frozenset({2})}})
    assert "docs/notes.txt" not in files_read(apart, [A], HASHES, ("tests",))
    elsewhere = replace(opens, files={"calc/ops.py": {B: frozenset({2})}, "calc/other.py": {A: frozenset({2})}})
    assert "docs/notes.txt" not in files_read(elsewhere, [A], HASHES, ("tests",))  # another file's lines 1-2
    gone = replace(opens, open_regions=(("calc/gone.py", 1, 2, B),))
    assert "docs/notes.txt" not in files_read(gone, [A], HASHES, ("tests",))  # opened in a file no case ran a line of
