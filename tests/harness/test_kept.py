"""Kept results: every run's logs, JUnit, outcomes.json and matrix.json outlive the process, under
.seamgate/runs/<timestamp>/ (or --output DIR), with `latest` pointing at the newest."""

from __future__ import annotations

import io
import json
from pathlib import Path

from harness.gates.model import RedSet
from harness.run.runner import RunOptions, catalog_materializer, run_gates
from harness.results.workspace import KEEP, latest, prune
from tests.reports.fixture_projects import catalog, gate, mutation, shared_server, write_project

ADD = "tests/test_add.py"
MUTATIONS = catalog(mutation("add-off-by-one", "return a + b", "return a + b + 1"))


def run(project: Path, **options):
    out = io.StringIO()
    report, code = run_gates([gate("g", mutation="add-off-by-one", red=RedSet(nodeids=(f"{ADD}::test_add_zero",)))],
                             project=project, options=RunOptions(progress=False, **options),
                             materializer=catalog_materializer(MUTATIONS), stdout=out, launcher=shared_server())
    return report, code, out.getvalue()


def test_a_run_keeps_its_logs_junit_outcomes_and_matrix_and_latest_points_at_it(tmp_path: Path):
    project = write_project(tmp_path / "p")
    report, code, text = run(project)
    kept = latest(project)
    assert kept is not None and kept.parent == project / ".seamgate" / "runs"
    assert f"results kept in {kept}" in text
    outcomes = json.loads((kept / "outcomes.json").read_text())
    assert outcomes["exit_code"] == int(code) and outcomes["outcomes"][0]["verdict"] == "FAIL"
    for run_ in outcomes["outcomes"][0]["runs"]:
        assert Path(run_["log"]).is_file() and Path(run_["log"]).is_relative_to(kept)  # the FAIL's log still exists
        assert (Path(run_["log"]).parent / "junit.xml").is_file()
    matrix = json.loads((kept / "matrix.json").read_text())["rows"]
    assert {k: v for k, v in matrix["mutation add-off-by-one cpu-emulated"][f"{ADD}::test_add_small"].items() if k != "duration"} == {"kind": "failed", "inferred": False, "carried": False}
    assert matrix["mutation add-off-by-one cpu-emulated"]["tests/test_mul.py::test_mul"]["inferred"] is True


def test_output_names_the_kept_folder_and_leaves_latest_alone(tmp_path: Path):
    project = write_project(tmp_path / "p")
    run(project, output=tmp_path / "out")
    assert (tmp_path / "out" / "outcomes.json").is_file() and latest(project) is None


def test_only_the_newest_folders_are_kept(tmp_path: Path):
    root = tmp_path / "runs"
    for i in range(KEEP + 3):
        (root / f"2026010{i:02d}T000000Z-1").mkdir(parents=True)
    removed = prune(root)
    assert len(removed) == 3 and len(list(root.iterdir())) == KEEP
    assert sorted(p.name for p in removed) == [f"2026010{i:02d}T000000Z-1" for i in range(3)]


def test_a_second_run_with_nothing_changed_reuses_every_row_and_a_change_reruns_only_the_rows_reaching_it(tmp_path: Path):
    from harness.exit_codes import ExitCode
    from reports.outcome import Verdict

    project = write_project(tmp_path / "p")
    mutations = catalog(mutation("add-off-by-one", "return a + b", "return a + b + 1"),
                        mutation("mul-off", "return a * b", "return a * b + 1"))
    gates = [gate("add", mutation="add-off-by-one", red=RedSet(files=(ADD,))),
             gate("mul", mutation="mul-off", red=RedSet(files=("tests/test_mul.py",)))]

    def go(**options):
        return run_gates(gates, project=project, options=RunOptions(progress=False, reuse=True, **options),
                         materializer=catalog_materializer(mutations), stdout=io.StringIO(), launcher=shared_server())

    first, _ = go()
    second, code = go()
    assert code is ExitCode.OK and [o.verdict for o in second.outcomes] == [Verdict.PASS, Verdict.PASS]
    assert all("reused from the previous run" in o.message for o in second.outcomes)
    assert [o.runs[0].cases for o in second.outcomes] == [o.runs[0].cases for o in first.outcomes]
    assert all(Path(r.log).is_file() and Path(r.log).is_relative_to(latest(project)) for o in second.outcomes for r in o.runs)
    (project / "tests/test_add.py").write_text((project / "tests/test_add.py").read_text() + "\n# touched\n")
    third, _ = go()
    by_gate = {o.gate: o.message for o in third.outcomes}
    assert "reused" not in by_gate["add"]  # its cases read tests/test_add.py (the baseline re-ran too)
    fourth, _ = go(prove=True)
    assert not any("reused" in o.message for o in fourth.outcomes)  # --prove never takes a default run's rows


def test_a_change_reruns_only_the_cells_it_reaches_and_carries_the_rest_with_their_reach_moved(tmp_path: Path):
    from harness.exit_codes import ExitCode
    from reports.outcome import Verdict

    project = write_project(tmp_path / "p")
    mutations = catalog(mutation("add-off-by-one", "return a + b", "return a + b + 1"),
                        mutation("mul-off", "return a * b", "return a * b + 1"))
    gates = [gate("add", mutation="add-off-by-one", red=RedSet(files=(ADD,))),
             gate("mul", mutation="mul-off", red=RedSet(files=("tests/test_mul.py",)))]

    def go():
        report, code = run_gates(gates, project=project, options=RunOptions(progress=False, reuse=True),
                                 materializer=catalog_materializer(mutations), stdout=io.StringIO(),
                                 launcher=shared_server())
        assert code is ExitCode.OK and [o.verdict for o in report.outcomes] == [Verdict.PASS, Verdict.PASS]
        rows = json.loads((latest(project) / "matrix.json").read_text())["rows"]
        return report, {label: {n.split("::")[-1]: c["carried"] for n, c in cells.items()} for label, cells in rows.items()}

    go()
    ops = project / "calc/ops.py"
    # One line of add's body becomes two: mul's lines move down by one.
    ops.write_text(ops.read_text().replace("    return a + b\n", "    total = a + b\n    return total\n"))
    mutations = catalog(mutation("add-off-by-one", "return total", "return total + 1"),
                        mutation("mul-off", "return a * b", "return a * b + 1"))
    report, carried = go()
    assert carried["working tree cpu-emulated"] == {"test_add_small": False, "test_add_zero": False, "test_mul": True}
    assert carried["mutation mul-off cpu-emulated"]["test_mul"] is True  # same entry, mul not reached by the edit
    assert "1 of 3 cells carried from the previous run" in {o.gate: o.message for o in report.outcomes}["mul"]
    # Now mul's body changes, on the line it moved to: test_mul must run again (its kept reach moved with it).
    ops.write_text(ops.read_text().replace("    return a * b\n", "    product = a * b\n    return product\n"))
    mutations = catalog(mutation("add-off-by-one", "return total", "return total + 1"),
                        mutation("mul-off", "return product", "return product + 1"))
    _, carried = go()
    assert carried["working tree cpu-emulated"] == {"test_add_small": True, "test_add_zero": True, "test_mul": False}
    assert carried["mutation add-off-by-one cpu-emulated"] == {"test_add_small": True, "test_add_zero": True,
                                                              "test_mul": False}
    assert carried["mutation mul-off cpu-emulated"]["test_mul"] is False
