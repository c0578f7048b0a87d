"""Which cells a run may carry from a kept run (``harness/reach/incremental.py``): a cell is carried only
when no change since that run can reach its case; every change whose reach is unknown runs every case
again (issue 28: a defect here is a false PASS)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.reach.incremental import (Snapshot, cases_to_rerun, changed_files, entry_digest, line_map, merge_reach,
                                       moved_lines, write_sources)
from harness.reach.reach import Reach
from harness.results.reuse import write_kept_rows
from tests.reports.fixture_projects import mutation

A, B, C = "tests/test_a.py::test_a", "tests/test_b.py::test_b", "tests/test_c.py::test_c"
OPS = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
PROJECT = {"calc/ops.py": OPS, "calc/unmeasured.py": "def f():\n    return 1\n", "calc/child.py": "def g():\n    return 2\n",
           "tests/test_a.py": "", "tests/test_b.py": "", "tests/test_c.py": "", "tests/sub/conftest.py": "",
           "tests/data/table.txt": "1 2 3\n", "tests_extra/data.txt": "x\n", "docs/notes.txt": "n\n",
           "conftest.py": "", "pyproject.toml": "", "setup.cfg": "", "pytest.ini": "", "tox.ini": ""}


def measured(spawned: tuple[str, ...] = (), opened: dict[str, set[str]] | None = None,
             open_regions: tuple[tuple[str, int, int, str], ...] = (), starters: frozenset[str] | None = frozenset()) -> Reach:
    """A ran add (line 2), B ran mul (line 6), C's measured child ran ``calc/child.py``; the files each case
    opened (``opened=None``: a reach recorded before reads were)."""
    return Reach(files={"calc/ops.py": {A: frozenset({2}), B: frozenset({6}), "": frozenset({1, 5})}},
                 fixtures={A: (), B: (), C: ()}, spawned=frozenset(spawned), cases=frozenset({A, B, C}),
                 children={C: {"calc/child.py": frozenset({2})}}, starters=starters,
                 opened=None if opened is None else {c: frozenset(v) for c, v in opened.items()},
                 open_regions=open_regions)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for rel, text in PROJECT.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def hashes(project: Path) -> dict[str, str]:
    return {p.relative_to(project).as_posix(): str(hash(p.read_bytes())) for p in project.rglob("*") if p.is_file()}


def snapshot(project: Path) -> Snapshot:
    return Snapshot(hashes=hashes(project), sources={"calc/ops.py": OPS, "calc/child.py": PROJECT["calc/child.py"]})


def rerun(project: Path, before: Snapshot, spawned=(), select=("tests",), reach=...) -> frozenset[str] | None:
    return cases_to_rerun(before, hashes(project), project, measured(spawned, opened={}) if reach is ... else reach,
                          [A, B, C], select)


def edit(project: Path, rel: str, text: str) -> None:
    (project / rel).write_text(text)


def test_with_nothing_changed_nothing_runs_again(project: Path):
    assert rerun(project, snapshot(project)) == frozenset()


def test_a_changed_body_runs_again_the_cases_that_executed_it_and_no_other(project: Path):
    before = snapshot(project)
    edit(project, "calc/ops.py", OPS.replace("a * b", "b * a"))
    assert rerun(project, before) == {B}
    edit(project, "calc/ops.py", OPS.replace("a + b", "b + a"))
    assert rerun(project, before) == {A}


def test_a_changed_file_a_measured_child_ran_runs_its_case_again(project: Path):
    before = snapshot(project)
    edit(project, "calc/child.py", "def g():\n    return 3\n")
    assert rerun(project, before) == {C}


def test_a_case_of_unknown_reach_runs_again_on_any_change(project: Path):
    before = snapshot(project)
    edit(project, "calc/ops.py", OPS.replace("a * b", "b * a"))
    assert rerun(project, before, spawned=(C,)) == {B, C}


def test_without_a_kept_snapshot_or_reach_every_case_runs_again(project: Path):
    assert rerun(project, Snapshot()) is None
    assert rerun(project, snapshot(project), reach=None) is None


@pytest.mark.parametrize("rel", ["tests/sub/conftest.py", "conftest.py", "pyproject.toml", "setup.cfg", "pytest.ini",
                                 "tox.ini"])
def test_a_changed_configuration_file_at_any_depth_runs_every_case_again(project: Path, rel: str):
    before = snapshot(project)
    edit(project, rel, "# changed\n")
    assert rerun(project, before) is None


def test_a_changed_data_file_in_a_sub_folder_of_a_selected_folder_runs_every_case_again(project: Path):
    before = snapshot(project)
    edit(project, "tests/data/table.txt", "1 2 4\n")
    assert rerun(project, before) is None
    assert rerun(project, before, select=("tests/",)) is None
    assert rerun(project, before, select=("tests/test_a.py::test_a", "tests")) is None
    assert rerun(project, before, select=("tests/test_a.py",)) == frozenset()  # not in what the run selects


def test_a_data_file_under_a_folder_whose_name_only_starts_like_a_selected_one_changes_nothing(project: Path):
    before = snapshot(project)
    edit(project, "tests_extra/data.txt", "y\n")
    edit(project, "docs/notes.txt", "m\n")
    assert rerun(project, before) == frozenset()
    assert rerun(project, before, select=("tests_extra",)) is None


def test_a_measured_python_file_whose_text_was_not_kept_runs_every_case_again(project: Path):
    before = Snapshot(hashes=hashes(project), sources={})
    edit(project, "calc/ops.py", OPS.replace("a * b", "b * a"))
    assert rerun(project, before) is None
    before = Snapshot(hashes=hashes(project), sources={})
    edit(project, "calc/child.py", "def g():\n    return 4\n")  # measured in a child only
    assert rerun(project, before) is None


def test_a_python_file_no_case_executed_or_a_new_one_changes_nothing(project: Path):
    before = snapshot(project)
    edit(project, "calc/unmeasured.py", "def f():\n    return 5\n")
    edit(project, "calc/new.py", "VALUE = 1\n")
    assert rerun(project, before) == frozenset()


def test_a_removed_measured_file_runs_again_every_case_that_executed_it(project: Path):
    before = snapshot(project)
    (project / "calc/ops.py").unlink()
    assert rerun(project, before) == {A, B}  # its def lines are gone: whole-file reach (C never ran it)


def test_changed_files_are_the_added_removed_and_edited_ones():
    assert changed_files({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "9", "d": "4"}) == {"b", "c", "d"}


def test_a_mutation_rows_cells_are_carried_only_under_the_same_catalog_entry_text():
    one = mutation("add-off", "return a + b", "return a + b + 1")
    assert entry_digest(one) == entry_digest(mutation("add-off", "return a + b", "return a + b + 1"))
    assert entry_digest(one) != entry_digest(mutation("add-off", "return a + b", "return a + b + 2"))
    assert entry_digest(one) != entry_digest(mutation("add-off", "return a - b", "return a + b + 1"))


def test_a_snapshot_is_read_from_a_kept_folder_and_is_empty_when_absent_or_unreadable(tmp_path: Path, project: Path):
    assert Snapshot.read(None) == Snapshot() and Snapshot.read(tmp_path / "none") == Snapshot()
    folder = tmp_path / "kept"
    folder.mkdir()
    write_kept_rows(folder, {}, {"calc/ops.py": "h"})
    assert Snapshot.read(folder) == Snapshot()  # no sources.json
    reach = Reach(files={"calc/ops.py": {A: frozenset({2})}}, fixtures={}, spawned=frozenset(), cases=frozenset({A}),
                  children={C: {"calc/child.py": frozenset({2})}})
    write_sources(folder, project, [reach, None])
    read = Snapshot.read(folder)
    assert read.hashes == {"calc/ops.py": "h"}
    assert read.sources == {"calc/ops.py": OPS, "calc/child.py": PROJECT["calc/child.py"]}
    (folder / "sources.json").write_text("[")
    assert Snapshot.read(folder) == Snapshot()


def test_line_map_follows_the_lines_an_edit_left_as_they_were():
    old = "a\nb\nc\nd\n"
    assert line_map(old, "a\nx\ny\nc\nd\n") == {1: 1, 3: 4, 4: 5}
    assert line_map(old, old) == {1: 1, 2: 2, 3: 3, 4: 4}


def test_moved_lines_map_each_changed_python_file_whose_text_was_kept(project: Path):
    before = snapshot(project)
    edit(project, "calc/ops.py", "# header\n" + OPS)
    edit(project, "calc/unmeasured.py", "def f():\n    return 7\n")  # not kept: no map
    moved = moved_lines(before, project, hashes(project))
    assert set(moved) == {"calc/ops.py"} and moved["calc/ops.py"][2] == 3 and moved["calc/ops.py"][6] == 7
    (project / "calc/ops.py").unlink()
    assert moved_lines(before, project, {k: v for k, v in hashes(project).items()})["calc/ops.py"] == {}


def test_a_merged_reach_keeps_the_carried_cases_moved_and_takes_the_rerun_ones_new():
    old = {"root": "/old", "cases": [A, B, C],
           "files": {"calc/ops.py": {A: [2], B: [6], "": [1, 5]}, "calc/x.py": {C: [3]}},
           "fixtures": {A: ["model"], B: []}, "children": {A: {"calc/ops.py": [2]}, B: {"calc/x.py": [1]}},
           "spawned": [A, B], "spawn_counts": {A: [1, 0], B: [0, 1]},
           "spawn_regions": [["calc/ops.py", 1, 2, A], ["calc/x.py", 1, 3, B], ["calc/x.py", 1, 3, C]]}
    new = {"root": "/new", "cases": [B], "files": {"calc/ops.py": {B: [7], "": [1, 2, 6]}},
           "fixtures": {B: ["tmp_path"]}, "children": {}, "spawned": [], "spawn_counts": {B: [0, 0]},
           "spawn_regions": []}
    moved = {"calc/ops.py": {1: 2, 2: 3, 5: 6, 6: 7}}  # a line inserted at the top
    merged = merge_reach(old, new, [B], moved)
    assert merged["root"] == "/new" and merged["cases"] == [A, C, B]
    assert merged["files"]["calc/ops.py"] == {A: [3], B: [7], "": [1, 2, 6]}  # A's line moved; old import lines dropped
    assert merged["files"]["calc/x.py"] == {C: [3]}
    assert merged["fixtures"] == {A: ["model"], B: ["tmp_path"]}
    assert merged["children"] == {A: {"calc/ops.py": [3]}}
    assert merged["spawned"] == [A] and merged["spawn_counts"] == {A: [1, 0], B: [0, 0]}
    assert merged["spawn_regions"] == [["calc/x.py", 1, 3, C]]  # B re-ran; ops.py changed under A's region
    rewritten = merge_reach(old, new, [B], {"calc/ops.py": {1: 1, 5: 5, 6: 6}})  # A's line 2 rewritten
    assert A not in rewritten["files"]["calc/ops.py"]
    assert merge_reach({"root": "/old"}, {}, [], {})["root"] == "/old"


# ---- survivors of the first sweep of harness/reach/incremental.py (issue 28), killed ------------------------


def test_without_a_kept_snapshot_every_case_runs_again_even_in_a_project_without_configuration_files(tmp_path: Path):
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc/ops.py").write_text(OPS)
    now = {"calc/ops.py": "h"}
    assert cases_to_rerun(Snapshot(), now, tmp_path, measured(), [A, B, C], ("tests",)) is None


def test_a_snapshot_kept_without_file_hashes_reads_as_none_kept(tmp_path: Path):
    (tmp_path / "rows.json").write_text(json.dumps({"schema": 1, "rows": {}}))  # no "files": an older seamgate
    (tmp_path / "sources.json").write_text(json.dumps({"calc/ops.py": OPS}))
    assert Snapshot.read(tmp_path).hashes == {}


def test_an_unreadable_measured_file_does_not_stop_the_others_being_kept(tmp_path: Path, project: Path):
    reach = Reach(files={"calc/a_gone.py": {A: frozenset({1})}, "calc/ops.py": {A: frozenset({2})}}, fixtures={},
                  spawned=frozenset(), cases=frozenset({A}))
    write_sources(tmp_path, project, [reach])
    assert json.loads((tmp_path / "sources.json").read_text()) == {"calc/ops.py": OPS}


def test_a_new_module_or_an_unexecuted_one_does_not_hide_a_later_change(project: Path):
    before = snapshot(project)
    edit(project, "calc/a_new.py", "VALUE = 1\n")  # sorts before calc/ops.py
    edit(project, "calc/ops.py", OPS.replace("a * b", "b * a"))
    assert rerun(project, before) == {B}
    edit(project, "calc/a_idle.py", "def f():\n    return 0\n")
    before = snapshot(project)
    edit(project, "calc/a_idle.py", "def f():\n    return 1\n")  # kept, never executed, sorts first
    edit(project, "calc/ops.py", OPS.replace("a + b", "b + a"))
    assert rerun(project, before) == {A}


def test_a_changed_non_python_test_file_named_by_a_node_id_runs_every_case_again(project: Path):
    edit(project, "tests/cases.yaml", "- 1\n")  # a file a plugin collects: node ids name it
    before = Snapshot(hashes={**hashes(project), "tests/cases.yaml": "old"}, sources=snapshot(project).sources)
    now = {**hashes(project), "tests/cases.yaml": "new"}
    for entry in ("tests/cases.yaml::one", "tests/cases.yaml::Group::one"):
        assert cases_to_rerun(before, now, project, measured(opened={}), [A, B, C], (entry,)) is None, entry


def test_a_selected_folder_whose_name_ends_in_x_covers_only_itself(project: Path):
    before = Snapshot(hashes={**hashes(project), "tests/foo/data.txt": "old"}, sources=snapshot(project).sources)
    now = {**hashes(project), "tests/foo/data.txt": "new"}
    assert cases_to_rerun(before, now, project, measured(opened={}), [A, B, C], ("tests/fooX",)) == frozenset()


def test_line_map_follows_lines_that_repeat_hundreds_of_times():
    old = "pass\n" * 250
    assert line_map(old, "x = 1\n" + old) == {n: n + 1 for n in range(1, 251)}


def test_a_merged_reach_drops_the_old_lines_of_every_case_the_new_run_recorded():
    old = {"cases": [A, B], "files": {"calc/ops.py": {B: [5], A: [2]}, "calc/x.py": {"": [1, 3]}}}
    new = {"cases": [B], "files": {"calc/ops.py": {B: [7]}}}
    merged = merge_reach(old, new, [], {"calc/ops.py": {2: 2, 5: 6, 6: 7}})
    assert merged["files"]["calc/ops.py"] == {A: [2], B: [7]}  # B's old line 5 (now 6) is not carried
    assert merged["files"]["calc/x.py"] == {"": [1, 3]}  # an unchanged file's import-time lines are carried
    merged = merge_reach(old, new, [B], {"calc/ops.py": {2: 2, 5: 6, 6: 7}})
    assert merged["files"]["calc/ops.py"] == {A: [2], B: [7]}


def test_a_merged_reach_takes_the_new_runs_children_spawns_and_import_lines_beside_the_kept_ones():
    old = {"cases": [A, B], "files": {"calc/x.py": {"": [1, 3]}}, "children": {A: {"calc/c.py": [1]}},
           "spawned": [A], "spawn_regions": [["calc/x.py", 1, 3, A]]}
    new = {"cases": [B], "files": {"calc/x.py": {"": [1, 5]}}, "children": {B: {"calc/c.py": [2]}},
           "spawned": [B], "spawn_regions": [("calc/y.py", 4, 6, B)]}
    merged = merge_reach(old, new, [B], {})
    assert merged["files"]["calc/x.py"] == {"": [1, 3, 5]}
    assert merged["children"] == {A: {"calc/c.py": [1]}, B: {"calc/c.py": [2]}}
    assert merged["spawned"] == [A, B]
    assert merged["spawn_regions"] == [["calc/x.py", 1, 3, A], ["calc/y.py", 4, 6, B]]


def test_a_measured_file_that_can_no_longer_be_read_runs_again_the_cases_that_executed_it(project: Path):
    before = snapshot(project)
    (project / "calc/ops.py").write_bytes(b"\xff\xfe not utf-8\n")
    assert rerun(project, before) == {A, B}  # read as no text: its def lines are gone, whole-file reach


def test_a_changed_file_outside_the_selection_runs_again_the_cases_that_opened_it_or_listed_its_folder(project: Path):
    before = snapshot(project)
    edit(project, "docs/notes.txt", "changed\n")
    assert rerun(project, before, reach=measured(opened={A: {"docs/notes.txt"}, B: {"tests/data/table.txt"}})) == {A}
    assert rerun(project, before, reach=measured(opened={B: {"docs/"}})) == {B}  # B listed the folder
    assert rerun(project, before, reach=measured(opened={})) == frozenset()  # no case read it


def test_a_file_outside_the_selection_opened_at_import_or_with_no_record_of_reads_runs_every_case_again(project: Path):
    before = snapshot(project)
    edit(project, "docs/notes.txt", "changed\n")
    assert rerun(project, before, reach=measured(opened={"": {"docs/notes.txt"}})) is None
    assert rerun(project, before, reach=measured(opened=None)) is None  # a reach recorded before reads were
    assert rerun(project, before, reach=measured(opened={}, starters=None)) is None


def test_a_case_that_started_a_child_may_read_any_file_outside_the_selection(project: Path):
    before = snapshot(project)
    edit(project, "docs/notes.txt", "changed\n")
    assert rerun(project, before, reach=measured(opened={}, starters=frozenset({C}))) == {C}  # its child's reads: unrecorded


def test_a_case_that_ran_the_function_that_opened_a_file_may_read_it_from_a_cache(project: Path):
    before = snapshot(project)
    edit(project, "docs/notes.txt", "changed\n")
    # C opened it inside add (calc/ops.py lines 1-2), which A ran too: A may have read C's cached content
    reach = measured(opened={C: {"docs/notes.txt"}}, open_regions=(("calc/ops.py", 1, 2, C),))
    assert rerun(project, before, reach=reach) == {A, C}


def test_a_merged_reach_keeps_the_kept_cases_reads_and_takes_the_rerun_ones_new():
    old = {"cases": [A, B], "files": {}, "opened": {A: ["docs/a.txt"], B: ["docs/b.txt"], "": ["x.txt"]},
           "open_regions": [["calc/ops.py", 1, 2, A], ["calc/ops.py", 5, 6, B]]}
    new = {"cases": [A], "files": {}, "opened": {A: ["docs/a2.txt"], "": ["y.txt"]}, "open_regions": []}
    merged = merge_reach(old, new, [A], {"calc/ops.py": {5: 7, 6: 8}})
    assert merged["opened"] == {B: ["docs/b.txt"], A: ["docs/a2.txt"], "": ["y.txt"]}
    assert merged["open_regions"] == [["calc/ops.py", 7, 8, B]]  # its lines moved past the edit
    assert "opened" not in merge_reach({k: v for k, v in old.items() if k != "opened"}, new, [A], {})


def test_with_no_file_outside_the_selection_changed_a_reach_without_a_record_of_reads_still_carries(project: Path):
    before = snapshot(project)
    assert rerun(project, before, reach=measured(opened=None)) == frozenset()
    assert rerun(project, before, reach=measured(opened={}, starters=frozenset({C}))) == frozenset()  # nothing changed
    edit(project, "calc/ops.py", OPS.replace("a * b", "b * a"))
    assert rerun(project, before, reach=measured(opened=None)) == {B}  # a Python change: its reach alone


def test_a_file_in_the_projects_top_folder_or_a_nested_one_is_read_by_a_listing_of_its_own_folder_only(project: Path):
    before = snapshot(project)
    edit(project, "setup.cfg", "changed\n")  # a configuration file: every case
    assert rerun(project, before, reach=measured(opened={A: {""}})) is None
    before = snapshot(project)
    (project / "top.txt").write_text("new\n")
    (project / "docs/sub").mkdir()
    (project / "docs/sub/deep.txt").write_text("new\n")
    assert rerun(project, before, reach=measured(opened={A: {""}, B: {"docs/"}, C: {"docs/sub/"}})) == {A, C}


def test_a_merged_reach_drops_the_old_import_time_reads_and_widens_a_region_the_edit_rewrote():
    old = {"cases": [A, B], "files": {}, "opened": {"": ["x.txt"], B: ["docs/b.txt"]},
           "open_regions": [["calc/ops.py", 1, 2, B], ["calc/other.py", 3, 4, B]]}
    new = {"cases": [A], "files": {}, "opened": {A: ["docs/a.txt"]}, "open_regions": [("calc/x.py", 1, 1, A)]}
    merged = merge_reach(old, new, [A], {"calc/ops.py": {1: 1}})  # line 2 was rewritten: the region covers the file
    assert merged["opened"] == {B: ["docs/b.txt"], A: ["docs/a.txt"]}  # import time is the new run's alone
    assert merged["open_regions"] == [["calc/ops.py", 1, 1 << 30, B], ["calc/other.py", 3, 4, B], ["calc/x.py", 1, 1, A]]
    assert merge_reach(old, {"cases": [A], "files": {}, "opened": {}}, [A], {})["open_regions"] == \
        [["calc/ops.py", 1, 2, B], ["calc/other.py", 3, 4, B]]  # a new run that opened nothing in a function
    assert merge_reach({k: v for k, v in old.items() if k != "open_regions"}, new, [A], {})["open_regions"] == \
        [["calc/x.py", 1, 1, A]]  # a kept run that opened nothing in a function
