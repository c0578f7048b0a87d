"""A row's result and a materialized tree each hold exactly one of what they made and why they could not."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.gates.model import SourceState
from harness.run.materialized import MaterializedTree
from harness.run.row_result import RowResult
from harness.run.trees import MadeTrees
from mutations.errors import MutationRotError
from reports.outcome import RunOutcome


def test_a_row_that_ran_gives_its_outcome_and_one_that_could_not_raises_why():
    ran = RowResult.ran(RunOutcome("row", "completed", 0, ()))
    assert ran.ok and ran.error is None and ran.run() is ran.outcome
    error = RuntimeError("no tree")
    failed = RowResult.failed(error)
    assert not failed.ok and failed.outcome is None
    with pytest.raises(RuntimeError, match="no tree"):
        failed.run()


def test_a_row_result_holds_exactly_one_of_an_outcome_and_an_error():
    with pytest.raises(ValueError):
        RowResult()
    with pytest.raises(ValueError):
        RowResult(RunOutcome("row", "completed", 0, ()), RuntimeError("both"))


def test_a_tree_that_could_not_be_made_says_why_in_a_gates_words(tmp_path: Path):
    made = MaterializedTree.made(tmp_path)
    assert made.ok and made.path == tmp_path and made.error is None
    rotted = MaterializedTree.failed(MutationRotError("m1", "anchor gone"))
    assert not rotted.ok and rotted.path is None
    assert rotted.why(SourceState(kind="mutation", mutation="m1")).startswith("mutation m1 no longer applies: ")
    bad_ref = MaterializedTree.failed(OSError("no such ref"))
    assert bad_ref.why(SourceState()) == f"cannot materialize {SourceState().label()}: no such ref"
    with pytest.raises(ValueError):
        MaterializedTree()


def test_a_path_set_among_the_made_trees_is_kept_as_a_tree_made_there(tmp_path: Path):
    made = MadeTrees()
    made[SourceState()] = tmp_path
    assert made[SourceState()] == MaterializedTree.made(tmp_path)
