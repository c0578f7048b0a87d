"""The matrix's selections and inferred cells (``harness/plan/matrix.py``), unit by unit: which entry
covers which case, the one run a row makes, what a gate reads of it, and what a mutation's row infers
(issue 28: a row that runs too little, or a view that reads another gate's cases, is a false PASS)."""

from __future__ import annotations

from harness.gates.model import SourceState
from harness.plan.matrix import (RowKey, exit_code_of, fill, in_select, inferred_note, selects_all,
                                 union_select, view)
from reports.outcome import CaseOutcome, RunOutcome


def test_a_prefix_is_not_a_folder():
    assert not in_select("tests/seam_extra/x.py::t", ("tests/seam",))
    assert not in_select("tests/seam_extra/x.py::t", ("tests/seam/",))
    assert in_select("tests/seam/x.py::t", ("tests/seam",)) and in_select("tests/seam/x.py::t", ("tests/seam/",))
    assert not selects_all(["tests/seam"], ["tests/seam_extra"])
    assert union_select([("tests/seam",), ("tests/seam_extra/x.py",)]) == ("tests/seam", "tests/seam_extra/x.py")
    assert not in_select("tests/test_a.py::test_ab", ("tests/test_a.py::test_a",))


def test_an_entry_covers_its_folder_its_file_its_node_ids_and_their_parameters():
    assert in_select("tests/test_a.py::test_a", ("tests/test_a.py",))
    assert in_select("tests/test_a.py::test_a[1]", ("tests/test_a.py::test_a",))
    assert in_select("tests/test_a.py::Class::test_a", ("tests/test_a.py::Class",))
    assert in_select("tests/test_a.py::test_a", ("tests/test_a.py::test_a",))
    assert not in_select("tests/test_b.py::test_a", ("tests/test_a.py",))


def test_a_collection_error_of_the_session_or_of_a_folder_above_the_selection_belongs_to_it():
    assert in_select("", ("tests/test_a.py",)) and in_select(".", ("tests/test_a.py",))
    assert in_select("tests", ("tests/test_a.py",))  # a collection error reported for a folder holding it
    assert not in_select("tests/test_b.py", ("tests/test_a.py",))
    assert not in_select("tests/test_a.py", ())


def test_the_union_of_selections_drops_only_what_another_entry_covers():
    assert union_select([("tests/a.py", "tests/"), ("tests",)]) == ("tests",)
    assert union_select([("tests/a.py::t",), ("tests/a.py::t[1]", "tests/a.py::u")]) == ("tests/a.py::t", "tests/a.py::u")
    assert union_select([("b", "a"), ("b",)]) == ("b", "a")


def test_a_kept_selection_serves_only_a_selection_it_covers_whole():
    assert selects_all(["tests"], ["tests/a.py", "tests/b/"]) and selects_all(["tests/"], ["tests/a.py::t"])
    assert not selects_all(["tests/a.py"], ["tests/a.py", "tests/b.py"])
    assert not selects_all(("tests",), ["tests/a.py"])  # not a kept row's JSON list
    assert selects_all(["x", "tests"], ["tests/a.py"])


def case(nodeid: str, kind: str = "passed", duration: float = 0.0, **more) -> CaseOutcome:
    return CaseOutcome(nodeid, kind, duration=duration, **more)


def test_a_view_reads_only_its_part_with_the_exit_code_pytest_would_give_it():
    row = RunOutcome("r", "completed", 1, (case("tests/a.py::t", "failed"), case("tests/b.py::u")))
    assert view(row, ("tests/b.py",)).exit_code == 0 and view(row, ("tests/a.py",)).exit_code == 1
    assert [c.nodeid for c in view(row, ("tests/b.py",)).cases] == ["tests/b.py::u"]
    crashed = RunOutcome("r", "crashed", None, row.cases)
    assert view(crashed, ("tests/b.py",)).exit_code is None  # the process's own end is kept
    assert [c.nodeid for c in view(crashed, ("tests/b.py",)).cases] == ["tests/b.py::u"]


def test_pytests_exit_code_is_5_for_no_case_and_1_for_any_failure_or_error():
    assert exit_code_of(()) == 5
    assert exit_code_of((case("a"), case("b", "skipped"))) == 0
    assert exit_code_of((case("a"), case("b", "failed"))) == 1 and exit_code_of((case("a", "error"),)) == 1


def test_a_mutations_row_infers_only_the_baseline_cases_it_did_not_run():
    baseline = RunOutcome("b", "completed", 1, (case("t::a"), case("t::b"), case("t::c", "failed"), case("t::d", carried=True)))
    ran = RunOutcome("m", "completed", 0, (case("t::a"),))
    row = fill(ran, baseline, frozenset({"t::a", "t::b"}))
    # t::b was asked for and not reported (a crash first): left out, never inferred green.
    assert [(c.nodeid, c.inferred, c.carried) for c in row.cases] == \
        [("t::a", False, False), ("t::c", True, False), ("t::d", True, False)]
    assert row.exit_code == 1  # the inferred red counts
    killed = fill(RunOutcome("m", "timeout", None, (case("t::a"),)), baseline, frozenset({"t::a"}))
    assert killed.exit_code is None and len(killed.cases) == 4


def test_the_note_counts_inferred_and_carried_cells():
    run = RunOutcome("m", "completed", 0, (case("a", inferred=True), case("b", carried=True), case("c")))
    assert inferred_note(run) == ("; 1 of 3 cases inferred from the baseline (their reach misses the change)"
                                  "; 1 of 3 cells carried from the previous run (no change since reaches them)")
    assert inferred_note(RunOutcome("m", "completed", 0, (case("c"),))) == ""


def test_a_row_key_labels_its_source_arm_and_environment_and_knows_its_baseline():
    key = RowKey(SourceState(kind="mutation", mutation="m"), "cuda", (("A", "1"), ("B", "2")))
    assert key.label() == "mutation m cuda A=1 B=2"
    assert key.baseline == RowKey(SourceState(), "cuda", (("A", "1"), ("B", "2")))
    assert RowKey(SourceState(), "cpu-emulated").label() == "working tree cpu-emulated"


# ---- survivors of the first sweep of harness/plan/matrix.py (issue 28), killed ----------------------------


def test_a_folder_whose_name_ends_in_x_is_not_its_namesake_without_the_x():
    assert union_select([("tests/fooX",), ("tests/foo/a.py",)]) == ("tests/fooX", "tests/foo/a.py")
    assert not selects_all(["tests/fooX"], ["tests/foo/a.py"])
    assert not selects_all(["tests/foo"], ["tests/fooX"])
    assert not in_select("tests/foo/a.py::t", ("tests/fooX",))


def test_node_ids_of_one_file_and_files_of_one_top_folder_are_handed_to_pytest_together():
    from harness.plan.matrix import grouped_by_folder

    assert grouped_by_folder(("tests/a.py::t1", "tests/b.py", "tests/a.py::t2")) == \
        ("tests/a.py::t1", "tests/a.py::t2", "tests/b.py")
    assert grouped_by_folder(("a/x.py", "b/y.py", "a/z.py")) == ("a/x.py", "a/z.py", "b/y.py")
    assert grouped_by_folder(("tests/s/a.py", "tests", "tests/s/b.py", "docs")) == \
        ("tests/s/a.py", "tests/s/b.py", "tests", "docs")
