"""Rows run longest first: a wide row that starts last runs alone at the end while the other cores wait.

A row's cost is the baseline durations of the cases it will run (its reach), known before any row
starts; with one job at a time, the start order of the kept runs shows the order."""

from __future__ import annotations

from pathlib import Path

from harness.gates.model import RedSet
from harness.results.workspace import latest
from tests.reports.fixture_projects import CALC, catalog, gate, mutation, run_quietly, write_project

SLOW_ADD = {
    **CALC,
    "tests/test_add.py": (
        "import time\nfrom calc.ops import add\n\n\n"
        "def test_add_small():\n    time.sleep(0.4)\n    assert add(1, 2) == 3\n\n\n"
        "def test_add_zero():\n    time.sleep(0.4)\n    assert add(0, 5) == 5\n"
    ),
}
MUTATIONS = catalog(
    mutation("mul-off", "return a * b", "return a * b + 1"),
    mutation("add-off", "return a + b", "return a + b + 1"),
)


def test_the_row_whose_cases_take_longest_starts_first_whatever_the_gate_order(tmp_path: Path):
    project = write_project(tmp_path / "p", SLOW_ADD)
    gates = [gate("quick", mutation="mul-off", red=RedSet(count=1)),  # reaches test_mul only
             gate("slow", mutation="add-off", red=RedSet(count=2))]   # reaches both slow cases
    report, _, _ = run_quietly(project, gates, MUTATIONS, jobs=1)
    assert [o.verdict.value for o in report.outcomes] == ["PASS", "PASS"]
    started = sorted(p.name for p in (latest(project) / "runs").iterdir() if "mutation" in p.name)
    assert [name.split("-", 1)[1] for name in started] == ["mutation-add-off-cpu-emulated", "mutation-mul-off-cpu-emulated"], started
