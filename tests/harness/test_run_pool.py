"""The run's pool (``harness/rows/pool.py``) and what a run keeps (``harness/run/keeping.py``), as units."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from harness.gates.model import SourceState
from harness.plan.matrix import RowKey
from harness.run.keeping import matrix_rows, partial, partial_note
from harness.rows.pool import run_parallel
from harness.run.row_result import RowResult
from harness.run.runner import RunOptions
from reports.outcome import CaseOutcome, RunOutcome


def test_the_pool_gives_results_in_order_each_as_it_comes():
    seen: list[int] = []
    results = run_parallel([lambda i=i: i * i for i in range(6)], 3, on_stop=lambda: None, on_done=seen.append)
    assert results == [0, 1, 4, 9, 16, 25] and sorted(seen) == results


def test_a_failing_thunk_stops_the_pool_and_its_error_reaches_the_caller():
    stopped = threading.Event()

    def fail() -> None:
        raise RuntimeError("row broke")

    with pytest.raises(RuntimeError, match="row broke"):
        run_parallel([fail, lambda: 1], 2, on_stop=stopped.set)
    assert stopped.is_set()


def test_a_partial_run_names_its_options_and_a_whole_run_none(tmp_path: Path):
    assert partial(RunOptions()) == "" and partial_note(tmp_path, tmp_path / "kept", RunOptions()) == ""
    options = RunOptions(arms=("cpu-emulated",), gate_ids=("g",), shard=(1, 2))
    assert partial(options) == "--arm cpu-emulated --gate g --shard 1/2"
    assert partial_note(tmp_path, tmp_path / "kept", options) == (
        "partial run (--arm cpu-emulated --gate g --shard 1/2): .seamgate/runs/latest was not moved to it; "
        f"no whole run is kept yet; this run is kept in {tmp_path / 'kept'}")
    assert partial_note(tmp_path, tmp_path / "kept", RunOptions(arms=("cpu",), output=tmp_path)) == ""


def test_the_matrix_keeps_the_rows_that_ran_only():
    ran = RunOutcome("baseline", "completed", 0, (CaseOutcome("t.py::a", "passed", duration=0.5),))
    rows = {RowKey(SourceState(), "cpu-emulated"): RowResult.ran(ran),
            RowKey(SourceState(), "cpu-eager"): RowResult.failed(RuntimeError("no tree"))}
    assert matrix_rows(rows) == {RowKey(SourceState(), "cpu-emulated").label(): {
        "t.py::a": {"kind": "passed", "inferred": False, "carried": False, "duration": 0.5}}}
