"""A mutant that makes cases vanish at collection is never a survivor: the cases it removed were not judged.

A function that runs while pytest collects (a plugin's ``pytest_collection_modifyitems``) is swept in
a session of its own on plain source. Its mutant can remove cases from that session (``continue``
-> ``break`` in a deselection loop drops every case after the first deselected one), and with them
the very case that would kill it (the seam plugin's ``pytest_collection_modifyitems`` 14: its killer,
``tests/plugin/test_arm_marker.py``, comes after the first deselected test). No case failed, so the
sweep used to call it a survivor; it is OWED, naming a case that did not run, as a batch's
uncollected case is.
"""

from __future__ import annotations

import pytest

pytest.importorskip("mutmut", reason="mutmut 3 is in the test extra (pip install -e '.[test]')")

from reports.mutants import SweepResult  # noqa: E402
from tests.reports.fixture_projects import sweep_calc, write_project  # noqa: E402

pytestmark = pytest.mark.slow

PROJECT = {
    "pyproject.toml": "[tool.seamgate]\n",
    "calc/__init__.py": "",
    "calc/pick.py": (
        "def kept(items):\n"
        "    out = []\n"
        "    for item in items:\n"
        "        if 'skipme' in item.name:\n"
        "            continue\n"
        "        out.append(item)\n"
        "    return out\n"
    ),
    "conftest.py": (
        "from calc.pick import kept\n\n\n"
        "def pytest_collection_modifyitems(config, items):\n"
        "    items[:] = kept(items)\n"
    ),
    "tests/__init__.py": "",
    "tests/test_cases.py": (
        "def test_first():\n    pass\n\n\n"
        "def test_skipme():\n    raise AssertionError('never collected')\n\n\n"
        "def test_after():\n    pass\n"
    ),
}


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> SweepResult:
    return sweep_calc(write_project(tmp_path_factory.mktemp("sweep") / "calc", PROJECT))


def test_a_mutant_that_removes_cases_at_collection_is_owed_naming_one(swept: SweepResult) -> None:
    (broken,) = [m for m in swept.mutants if "+            break" in m.diff]
    assert broken.covered_by == ("tests/test_cases.py::test_first",)  # the precondition: test_after vanished
    assert broken.status == "owed"
    assert "tests/test_cases.py::test_after" in broken.reason and "did not run" in broken.reason


def test_a_mutant_run_on_its_own_that_keeps_every_case_is_judged_as_before(swept: SweepResult) -> None:
    judged = {m.status for m in swept.mutants if "+            break" not in m.diff}
    assert judged and "owed" not in judged
