"""Reuse across partial runs: a row is looked up in the newest kept run that holds it, so a
`seamgate run --gate X` in between costs the next full run nothing it could reuse."""

from __future__ import annotations

import io
import json
from pathlib import Path

from harness.gates.model import RedSet
from harness.run.runner import RunOptions, catalog_materializer, run_gates
from harness.results.workspace import latest
from reports.outcome import Verdict
from tests.reports.fixture_projects import catalog, gate, mutation, shared_server, write_project

ADD, MUL = "tests/test_add.py", "tests/test_mul.py"
MUTATIONS = catalog(mutation("add-off-by-one", "return a + b", "return a + b + 1"),
                    mutation("mul-off", "return a * b", "return a * b + 1"))


def go(project: Path, gates, **options):
    report, code = run_gates(gates, project=project, options=RunOptions(progress=False, reuse=True, **options),
                             materializer=catalog_materializer(MUTATIONS), stdout=io.StringIO(),
                             launcher=shared_server())
    return report, code


def cells(project: Path) -> dict[str, dict[str, dict]]:
    """The newest kept run's matrix: row label -> case name -> {kind, carried}."""
    rows = json.loads((latest(project) / "matrix.json").read_text())["rows"]
    return {label: {n.split("::")[-1]: {"kind": c["kind"], "carried": c["carried"]} for n, c in row.items()}
            for label, row in rows.items()}


def test_a_full_run_after_a_partial_run_reuses_the_rows_the_partial_run_did_not_hold(tmp_path: Path):
    project = write_project(tmp_path / "p")
    gates = [gate("add", mutation="add-off-by-one", select=(ADD,), red=RedSet(files=(ADD,))),
             gate("mul", mutation="mul-off", select=(MUL,), red=RedSet(files=(MUL,)))]
    first, _ = go(project, gates)
    go(project, gates, gate_ids=("mul",))  # a partial run: another baseline selection, only mul's row
    partial = latest(project)
    third, _ = go(project, gates)
    assert [o.verdict for o in third.outcomes] == [Verdict.PASS, Verdict.PASS]
    by_gate = {o.gate: o for o in third.outcomes}
    assert "rows reused from the previous run" in by_gate["add"].message
    # Nothing ran again: the baseline (of the full selection) and add's row come from the first run,
    # each with its log copied into the new kept folder.
    for run in by_gate["add"].runs:
        assert "/runs/reused-" in run.log and Path(run.log).is_file() and Path(run.log).is_relative_to(latest(project))
    assert [r.cases for r in by_gate["add"].runs] == [r.cases for r in first.outcomes[0].runs]
    assert latest(project) != partial


def test_cells_carried_from_an_older_kept_run_rerun_what_changed_since_that_run_not_since_the_newest(tmp_path: Path):
    project = write_project(tmp_path / "p")
    gates = [gate("add", mutation="add-off-by-one", red=RedSet(nodeids=(f"{ADD}::test_add_small",))),
             gate("mul", mutation="mul-off", red=RedSet(files=(MUL,)))]
    go(project, gates)
    assert cells(project)["mutation add-off-by-one cpu-emulated"]["test_add_zero"]["kind"] == "failed"
    ops = project / "calc/ops.py"
    # add now returns early on a zero: under add-off-by-one (which still applies, same entry) test_add_zero is green.
    ops.write_text(ops.read_text().replace("    return a + b\n",
                                           "    if 0 in (a, b):\n        return a or b\n    return a + b\n"))
    go(project, gates, gate_ids=("mul",))  # sees the edit; holds no add row
    report, _ = go(project, gates)  # nothing changed since the partial run; add's row is the first run's
    add = cells(project)["mutation add-off-by-one cpu-emulated"]
    assert add["test_add_zero"] == {"kind": "passed", "carried": False}  # ran again: the edit since the first run reaches it
    assert {o.gate: o.verdict for o in report.outcomes}["add"] is Verdict.PASS


def test_a_partial_baseline_in_between_does_not_stop_the_full_baseline_from_carrying_its_cells(tmp_path: Path):
    project = write_project(tmp_path / "p")
    gates = [gate("add", mutation="add-off-by-one", select=(ADD,), red=RedSet(files=(ADD,))),
             gate("mul", mutation="mul-off", select=(MUL,), red=RedSet(files=(MUL,)))]
    go(project, gates)
    go(project, gates, gate_ids=("mul",))  # its baseline selects tests/test_mul.py only, under the same row label
    ops = project / "calc/ops.py"
    ops.write_text(ops.read_text().replace("    return a * b\n", "    return a * b  # the product\n"))
    report, _ = go(project, gates)
    assert [o.verdict for o in report.outcomes] == [Verdict.PASS, Verdict.PASS]
    baseline = cells(project)["working tree cpu-emulated"]
    assert {name: cell["carried"] for name, cell in baseline.items()} == \
        {"test_add_small": True, "test_add_zero": True, "test_mul": False}


def test_a_prove_run_in_between_which_records_no_reach_does_not_stop_cells_being_carried(tmp_path: Path):
    project = write_project(tmp_path / "p")
    gates = [gate("add", mutation="add-off-by-one", red=RedSet(files=(ADD,))),
             gate("mul", mutation="mul-off", red=RedSet(files=(MUL,)))]
    go(project, gates)
    go(project, gates, prove=True, gate_ids=("add",))  # `seamgate mutations reds` runs so too: every case, no reach
    ops = project / "calc/ops.py"
    ops.write_text(ops.read_text().replace("    return a * b\n", "    return a * b  # the product\n"))
    report, _ = go(project, gates)
    assert [o.verdict for o in report.outcomes] == [Verdict.PASS, Verdict.PASS]
    carried = {row: {name: cell["carried"] for name, cell in cells_.items()} for row, cells_ in cells(project).items()}
    assert carried["working tree cpu-emulated"] == {"test_add_small": True, "test_add_zero": True, "test_mul": False}
    assert carried["mutation add-off-by-one cpu-emulated"] == {"test_add_small": True, "test_add_zero": True,
                                                              "test_mul": False}
