"""What a reused row or a carried cell depends on, end to end: each change below alters what a
mutation's row would observe, so a second ``seamgate run`` that took the kept row again would report
the FIRST run's verdict for code that no longer behaves so -- a false PASS (issue 28)."""

from __future__ import annotations

import io
from pathlib import Path

from harness.gates.model import RedSet
from harness.run.runner import RunOptions, catalog_materializer, run_gates
from reports.outcome import Verdict
from tests.reports.fixture_projects import CALC, catalog, gate, mutation, shared_server, write_project

DATA_TEST = "tests/test_table.py"
#: A test that reads its cases from a data file in a sub-folder of the selected folder ``tests``.
FILES = {
    **CALC,
    DATA_TEST: (
        "from pathlib import Path\n\nfrom calc.ops import add\n\n\n"
        "def test_the_table():\n"
        "    for line in (Path(__file__).parent / 'data' / 'table.txt').read_text().splitlines():\n"
        "        a, b, total = map(int, line.split())\n"
        "        assert add(a, b) == total\n"
    ),
    "tests/data/table.txt": "-1 2 1\n",
}
#: Wrong only for a negative operand: the table above reds it, a table of positive operands does not.
ABS = catalog(mutation("add-abs", "return a + b", "return abs(a) + abs(b)"))


def go(project: Path, mutations=ABS):
    gates = [gate("table", mutation="add-abs", red=RedSet(nodeids=(f"{DATA_TEST}::test_the_table",)))]
    report, _ = run_gates(gates, project=project, options=RunOptions(progress=False, reuse=True),
                          materializer=catalog_materializer(mutations), stdout=io.StringIO(), launcher=shared_server())
    return report.outcomes[0]


def test_a_changed_data_file_in_a_sub_folder_of_the_selection_runs_the_mutations_row_again(tmp_path: Path):
    project = write_project(tmp_path / "p", FILES)
    assert go(project).verdict is Verdict.PASS  # the negative operand reds the mutant
    (project / "tests/data/table.txt").write_text("1 2 3\n")  # the baseline stays green; the mutant now survives
    again = go(project)
    assert "reused" not in again.message
    assert again.verdict is Verdict.FAIL
