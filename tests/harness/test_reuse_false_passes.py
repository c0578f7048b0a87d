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


def go(project: Path, mutations=ABS, test: str = DATA_TEST):
    """The gate whose mutation ``test::test_the_table`` must red, run with reuse on; its one outcome."""
    gates = [gate("table", mutation="add-abs", red=RedSet(nodeids=(f"{test}::test_the_table",)))]
    report, _ = run_gates(gates, project=project, options=RunOptions(progress=False, reuse=True),
                          materializer=catalog_materializer(mutations), stdout=io.StringIO(), launcher=shared_server())
    return report.outcomes[0]


def test_a_changed_data_file_in_a_sub_folder_of_the_selection_runs_the_mutations_row_again(tmp_path: Path):
    project = write_project(tmp_path / "p", FILES)
    assert go(project).verdict is Verdict.PASS  # the negative operand reds the mutant
    (project / "tests/data/table.txt").write_text("1 2 3\n")  # the baseline stays green; the mutant now survives
    again = go(project)
    assert mutation_row(again) == (False, 0)
    assert again.verdict is Verdict.FAIL


SUB_TEST = "tests/sub/test_env.py"
#: A conftest.py below the project root that sets, at import (in no case's reach), what a test reads.
SUB_FILES = {
    **CALC,
    "tests/sub/__init__.py": "",
    "tests/sub/conftest.py": "import os\n\nos.environ['TABLE'] = '-1 2 1'\n",
    SUB_TEST: (
        "import os\n\nfrom calc.ops import add\n\n\n"
        "def test_the_table():\n"
        "    a, b, total = map(int, os.environ['TABLE'].split())\n"
        "    assert add(a, b) == total\n"
    ),
}


def mutation_row(outcome):
    """The mutation's row a gate read: (reused whole from a kept run, cells carried)."""
    run = next(r for r in outcome.runs if r.label.startswith("mutation"))
    return "/runs/reused-" in run.log, sum(c.carried for c in run.cases)


def test_a_changed_conftest_in_a_sub_folder_runs_the_mutations_row_again(tmp_path: Path):
    project = write_project(tmp_path / "p", SUB_FILES)
    assert go(project, test=SUB_TEST).verdict is Verdict.PASS
    conftest = project / "tests/sub/conftest.py"
    conftest.write_text(conftest.read_text().replace("-1 2 1", "1 2 3"))
    again = go(project, test=SUB_TEST)
    assert mutation_row(again) == (False, 0)
    assert again.verdict is Verdict.FAIL


def test_a_changed_catalog_entry_runs_its_row_again_and_carries_none_of_its_cells(tmp_path: Path):
    project = write_project(tmp_path / "p", FILES)
    assert go(project).verdict is Verdict.PASS
    # The same id, another text: a mutant the table does not red. Nothing else in the project changed.
    again = go(project, catalog(mutation("add-abs", "return a + b", "return a + b + 0")))
    assert mutation_row(again) == (False, 0)
    assert again.verdict is Verdict.FAIL


OUTSIDE_TEST = "tests/test_outside.py"
#: A test that reads its cases from a data file OUTSIDE the selected folder ``tests`` (the way tests/fidelity
#: reads evidence/*.json and docs/fidelity.md): only the case's own open of the file says that it depends on it.
OUTSIDE_FILES = {
    **CALC,
    OUTSIDE_TEST: (
        "from pathlib import Path\n\nfrom calc.ops import add\n\n\n"
        "def test_the_table():\n"
        "    for line in (Path(__file__).parents[1] / 'data' / 'table.txt').read_text().splitlines():\n"
        "        a, b, total = map(int, line.split())\n"
        "        assert add(a, b) == total\n"
    ),
    "data/table.txt": "-1 2 1\n",
}


def test_a_changed_data_file_outside_the_selection_that_a_case_opened_runs_the_mutations_row_again(tmp_path: Path):
    project = write_project(tmp_path / "p", OUTSIDE_FILES)
    assert go(project, test=OUTSIDE_TEST).verdict is Verdict.PASS  # the negative operand reds the mutant
    (project / "data/table.txt").write_text("1 2 3\n")  # the baseline stays green; the mutant now survives
    again = go(project, test=OUTSIDE_TEST)
    row = next(r for r in again.runs if r.label.startswith("mutation"))
    assert not mutation_row(again)[0]  # not the kept row: a file its cases opened changed
    assert [c.carried for c in row.cases if c.nodeid.startswith(OUTSIDE_TEST)] == [False]  # the reader ran again
    assert any(c.carried for c in row.cases)  # the cases that never opened it were carried
    assert again.verdict is Verdict.FAIL


def test_a_data_file_outside_the_selection_that_no_case_opened_keeps_the_row(tmp_path: Path):
    project = write_project(tmp_path / "p", {**OUTSIDE_FILES, "docs/notes.txt": "a\n"})
    assert go(project, test=OUTSIDE_TEST).verdict is Verdict.PASS
    (project / "docs/notes.txt").write_text("b\n")  # read by nothing the run measured
    again = go(project, test=OUTSIDE_TEST)
    assert mutation_row(again)[0] and again.verdict is Verdict.PASS
