"""Kept results: every run's logs, JUnit, outcomes.json and matrix.json outlive the process, under
.seamgate/runs/<timestamp>/ (or --output DIR), with `latest` pointing at the newest."""

from __future__ import annotations

import io
import json
from pathlib import Path

from harness.model import RedSet
from harness.runner import RunOptions, catalog_materializer, run_gates
from harness.workspace import KEEP, latest, prune
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
    assert {k: v for k, v in matrix["mutation add-off-by-one cpu-emulated"][f"{ADD}::test_add_small"].items() if k != "duration"} == {"kind": "failed", "inferred": False}
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
