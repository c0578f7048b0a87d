"""A child forked from a run's zygote (``harness/zygote.py``) counts for its case's reach as a real
``python`` child does: what it ran reaches its case, and a child whose data never arrived (killed at
its timeout) leaves its case's reach unknown, so that case runs in every row."""

from __future__ import annotations

from pathlib import Path

from harness.gates.model import RedSet
from reports.outcome import Verdict
from tests.reports.fixture_projects import CALC, catalog, gate, mutation, run_quietly, write_project

ADD = "tests/test_add.py"
ZYGOTE_CHILDREN = {
    **CALC,
    "tests/test_forked.py": (
        "import os, subprocess\n\n"
        "from harness.zygote import start_python\n\n"
        "ENV = {**os.environ, 'PYTHONPATH': os.getcwd()}\n\n\n"
        # No helper shared by the three: a function on the stack of a lost child's start makes every
        # case that runs it unknown too (it may cache the child's result).
        "def test_a_forked_child_runs_add():\n"
        "    started = start_python(['-c', 'from calc.ops import add; print(add(0, 3))'], env=ENV)\n"
        "    assert started.forked  # from the run's zygote, or this test covers nothing\n"
        "    assert started.communicate(timeout=60).stdout == '3\\n'\n\n\n"
        "def test_a_forked_child_runs_mul():\n"
        "    started = start_python(['-c', 'from calc.ops import mul; print(mul(2, 3))'], env=ENV)\n"
        "    assert started.forked and started.communicate(timeout=60).stdout == '6\\n'\n\n\n"
        "def test_a_forked_child_killed_before_it_could_report():\n"
        "    started = start_python(['-c', 'import time; from calc.ops import mul; mul(1, 1); time.sleep(60)'], env=ENV)\n"
        "    assert started.forked\n"
        "    try:\n"
        "        started.communicate(timeout=2)\n"
        "    except subprocess.TimeoutExpired:\n"
        "        pass\n"
        "    else:\n"
        "        raise AssertionError('the child should have been killed at its timeout')\n"
    ),
}
MUTATIONS = catalog(mutation("add-zero-is-one", "return a + b", "return a + b + (1 if 0 in (a, b) else 0)"))


def test_a_forked_childs_reach_is_its_cases_and_a_lost_child_makes_its_case_always_run(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", ZYGOTE_CHILDREN)
    red = (f"{ADD}::test_add_zero", "tests/test_forked.py::test_a_forked_child_runs_add")
    report, _, _ = run_quietly(project, [gate("g", mutation="add-zero-is-one", red=RedSet(nodeids=red))], MUTATIONS)
    [outcome] = report.outcomes
    cases = {c.nodeid: (c.kind, c.inferred) for c in outcome.runs[0].cases}
    assert cases == {
        f"{ADD}::test_add_small": ("passed", False), f"{ADD}::test_add_zero": ("failed", False),
        "tests/test_mul.py::test_mul": ("passed", True),
        "tests/test_forked.py::test_a_forked_child_runs_add": ("failed", False),  # its child ran add
        "tests/test_forked.py::test_a_forked_child_runs_mul": ("passed", True),  # its child ran only mul
        # its child was killed: no data, so its reach is unknown and it runs in every row
        "tests/test_forked.py::test_a_forked_child_killed_before_it_could_report": ("passed", False),
    }
    assert outcome.verdict is Verdict.PASS, outcome.message


ONE_CHILD = {
    **CALC,
    "tests/test_mul.py": (
        "import os\n\nfrom calc.ops import mul\nfrom harness import zygote\n\n\n"
        "def test_mul():\n"
        "    with open(os.environ['ZYGOTE_SEEN'], 'a') as seen:\n"
        "        seen.write(f'{zygote.ZYGOTE is not None}\\n')\n"
        "    assert mul(2, 3) == 6\n"
    ),
    "tests/test_forked.py": (
        "import os\n\nfrom harness.zygote import run_python\n\n\n"
        "def test_a_forked_child_runs_add():\n"
        "    done = run_python(['-c', 'from calc.ops import add; print(add(0, 3))'], env={**os.environ, 'PYTHONPATH': os.getcwd()})\n"
        "    assert done.stdout == '3\\n'\n"
    ),
}


def test_a_row_whose_cases_started_no_child_in_the_baseline_runs_without_a_zygote(tmp_path: Path, monkeypatch) -> None:
    project = write_project(tmp_path / "p", ONE_CHILD)
    seen = tmp_path / "seen.txt"
    monkeypatch.setenv("ZYGOTE_SEEN", str(seen))
    mutations = catalog(mutation("mul-off", "return a * b", "return a * b + 1"))
    g = gate("g", mutation="mul-off", red=RedSet(nodeids=("tests/test_mul.py::test_mul",)))
    report, _, _ = run_quietly(project, [g], mutations)
    assert report.outcomes[0].verdict is Verdict.PASS, report.outcomes[0].message
    # The two baseline runs (every case: one starts a child) have a zygote; the row runs test_mul alone.
    assert sorted(seen.read_text().split()) == ["False", "True", "True"]
