"""The sweep's speed rules (issue 26): a mutant stops at its first killing case, cheapest first;
``--all-killers`` keeps the full kill matrix; a mutant that failed before its time limit is killed by
those cases, not a timeout; time limits follow the baseline's measured time and say so; the one-line
failure report works on pytest 8's report path as on pytest 9's."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mutmut", reason="mutmut 3 is in the test extra (pip install -e '.[test]')")

from harness.rows import time_limits  # noqa: E402
from harness.sweep.sweep import Sweep, SweepOptions  # noqa: E402
from reports.mutants import SweepResult  # noqa: E402
from tests.reports.fixture_projects import shared_server, write_project  # noqa: E402

pytestmark = pytest.mark.slow

KILLERS = {
    "pyproject.toml": "[tool.seamgate]\n",
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    "tests/__init__.py": "",
    "tests/test_ops.py": (
        "import time\n\nfrom calc.ops import add\n\n\n"
        # collected first, but slow in the baseline: the sweep must try the cheap case first
        "def test_add_slow():\n    time.sleep(0.4)\n    assert add(1, 2) == 3\n\n\n"
        "def test_add_fast():\n    assert add(-1, -2) == -3\n"
    ),
}
# under `a - b`, add(1, 1) is 0: the teardown of a case that has already failed spins forever; a case
# that never fails spins in its body
HANGS = {
    "pyproject.toml": "[tool.seamgate]\n",
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n\n\ndef inc(a):\n    return a + 1\n",
    "tests/__init__.py": "",
    "tests/test_ops.py": (
        "import pytest\n\nfrom calc.ops import add, inc\n\n\n"
        "@pytest.fixture\ndef spins_after():\n    yield\n    while add(1, 1) != 2:\n        pass\n\n\n"
        "def test_add_then_spin(spins_after):\n    assert add(1, 2) == 3\n\n\n"
        "def test_inc_spins():\n    while inc(1) != 2:\n        pass\n"
    ),
}
MINUS = "calc.ops.x_add__mutmut_1"


def sweep(root: Path, **options: object) -> SweepResult:
    values = {"paths": (str(root / "calc"),), "jobs": 1, "progress": "off", "fresh": True, **options}
    return Sweep(root, SweepOptions(**values), launcher=shared_server()).run()  # type: ignore[arg-type]


def mutant(result: SweepResult, mutant_id: str):  # noqa: ANN201 - a MutantOutcome
    found = [m for m in result.mutants if m.id == mutant_id]
    if len(found) != 1:
        raise AssertionError(f"{mutant_id} not swept once: {[m.id for m in result.mutants]}")
    return found[0]


def test_by_default_a_mutant_stops_at_its_first_killer_and_the_cheapest_case_runs_first(tmp_path: Path) -> None:
    root = write_project(tmp_path / "calc", KILLERS)
    minus = mutant(sweep(root), MINUS)
    assert "-    return a + b\n+    return a - b\n" in minus.diff  # the test's premise: both cases kill it
    assert minus.status == "killed"
    assert minus.killers == ("tests/test_ops.py::test_add_fast",)
    assert minus.covered_by == ("tests/test_ops.py::test_add_fast",)


def test_all_killers_runs_every_reaching_case_and_records_every_killer(tmp_path: Path) -> None:
    root = write_project(tmp_path / "calc", KILLERS)
    result = sweep(root, all_killers=True)
    minus = mutant(result, MINUS)
    assert minus.status == "killed"
    assert set(minus.killers) == {"tests/test_ops.py::test_add_slow", "tests/test_ops.py::test_add_fast"}
    assert result.facts["killers"] == "all"
    assert result.facts["case_runs"] >= 2


def test_a_mutant_whose_case_failed_before_the_time_limit_is_killed_by_it_not_a_timeout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time_limits, "CONSTANT", 3.0)
    root = write_project(tmp_path / "calc", HANGS)
    minus = mutant(sweep(root), MINUS)
    assert minus.status == "killed", (minus.status, minus.reason)
    assert minus.killers == ("tests/test_ops.py::test_add_then_spin",)
    assert "before its time limit" in minus.reason


def test_a_timeout_says_where_its_limit_came_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time_limits, "CONSTANT", 3.0)
    root = write_project(tmp_path / "calc", HANGS)
    spins = [m for m in sweep(root).mutants if m.id.startswith("calc.ops.x_inc__mutmut_") and m.status == "timeout"]
    assert spins, "the premise: some mutant of inc() makes test_inc_spins spin"
    assert spins[0].killers == ()
    assert "x 0." in spins[0].reason and "the baseline's time of its 1 case(s)" in spins[0].reason, spins[0].reason


AT_IMPORT = {
    "pyproject.toml": "[tool.seamgate]\n",
    "calc/__init__.py": "",
    "calc/ops.py": "def scale():\n    return 3\n\n\nFACTOR = scale()\n\n\ndef times(a):\n    return a * FACTOR\n",
    "tests/__init__.py": "",
    "tests/test_ops.py": (
        "from calc.ops import times\n\n\n"
        "def test_times_one():\n    assert times(1) == 3\n\n\n"
        "def test_times_two():\n    assert times(2) == 6\n"
    ),
}
SCALE = "calc.ops.x_scale__mutmut_1"


@pytest.mark.parametrize("all_killers", [False, True])
def test_a_mutant_of_import_time_code_also_stops_at_its_first_killer(tmp_path: Path, all_killers: bool) -> None:
    root = write_project(tmp_path / "calc", AT_IMPORT)
    scale = mutant(sweep(root, all_killers=all_killers), SCALE)
    assert "+    return 4\n" in scale.diff  # the premise: both cases see FACTOR 4, set at import
    both = ("tests/test_ops.py::test_times_one", "tests/test_ops.py::test_times_two")
    assert scale.status == "killed"
    # which one kills first follows the baseline's times (kill_order), which are noise here
    assert scale.killers == both if all_killers else len(scale.killers) == 1 and scale.killers[0] in both, scale.killers
