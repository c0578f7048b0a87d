"""``--all-killers``: once a mutant is killed, a case that runs past ITS OWN limit is cut and counted a
killer (issue 26: the full kill matrix within 3x of the default).

cachetools' threading tests wait on their own 10 s timeouts under every mutant that breaks the locking
(0.08 s each in the baseline), so the full matrix took 12x the default. As PIT's per-test timeout, each
case of a mutant that already has a killer gets ``CASE_FACTOR`` x its baseline time + ``CASE_CONSTANT``;
past it, the child's group is killed, the case is a killer (named in the reason), and a new child runs
the cases left. Before the first kill no case is cut, so a cut never changes a mutant's status.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("mutmut", reason="mutmut 3 is in the test extra (pip install -e '.[test]')")

from harness.rows import time_limits  # noqa: E402
from tests.harness.test_sweep_stops_at_first_killer import MINUS, mutant, sweep  # noqa: E402
from tests.reports.fixture_projects import write_project  # noqa: E402

pytestmark = pytest.mark.slow

FAST, WAITS, AFTER = ("tests/test_ops.py::test_add_fast", "tests/test_ops.py::test_add_waits",
                      "tests/test_ops.py::test_add_after")
# under `a - b`: test_add_fast fails at once; test_add_waits waits on its own 30 s timeout (as
# cachetools' threading tests wait on theirs) and then fails; test_add_after, slowest in the baseline so
# run last, fails at once: the cases after a cut one still run
WAITING = {
    "pyproject.toml": "[tool.seamgate]\n",
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n\n\ndef pause():\n    return 0.0\n",
    "tests/__init__.py": "",
    "tests/test_ops.py": (
        "import time\n\nfrom calc.ops import add, pause\n\n\n"
        "def test_add_fast():\n    assert add(1, 2) == 3\n\n\n"
        "def test_add_waits():\n    time.sleep(0.05)\n    deadline = time.monotonic() + 30\n"
        "    while add(2, 2) != 4 and time.monotonic() < deadline:\n        time.sleep(0.01)\n"
        "    assert add(2, 2) == 4\n\n\n"
        "def test_add_after():\n    time.sleep(0.2)\n    assert add(3, 4) == 7\n\n\n"
        # under pause's `1.0`, slow (3 s) but green: no case killed that mutant, so it is never cut
        "def test_pause_is_slow_but_green():\n    time.sleep(pause() * 3)\n"
    ),
}


# add() also runs at import: its mutants' children are forked BEFORE collection (another path to cut in)
AT_IMPORT = {**WAITING, "calc/ops.py": WAITING["calc/ops.py"] + "\n\nZERO = add(0, 0)\n"}


@pytest.mark.parametrize("files", [WAITING, AT_IMPORT], ids=["after-collection", "before-collection"])
def test_a_killed_mutants_case_past_its_own_limit_is_cut_and_counted_a_killer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> None:
    monkeypatch.setattr(time_limits, "CASE_CONSTANT", 1.0)
    root = write_project(tmp_path / "calc", files)
    minus = mutant(sweep(root, all_killers=True), MINUS)
    assert "+    return a - b\n" in minus.diff  # the premise
    assert minus.status == "killed", (minus.status, minus.reason)
    # AFTER ran, so the 30 s wait was cut near its own limit (10 x ~0.05 s + 1 s), not waited out nor ended by
    # the mutant's limit: a timing assertion would add nothing but a flake under load
    assert minus.killers == (FAST, WAITS, AFTER), minus.killers
    assert WAITS in minus.reason and "its own limit" in minus.reason, minus.reason


def test_no_case_is_cut_before_the_mutant_has_a_killer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time_limits, "CASE_CONSTANT", 1.0)
    root = write_project(tmp_path / "calc", WAITING)
    slow = [m for m in sweep(root, all_killers=True).mutants
            if m.id.startswith("calc.ops.x_pause__mutmut_") and "+    return 1.0\n" in m.diff]
    assert len(slow) == 1, "the premise: mutmut turns pause()'s 0.0 into 1.0"
    assert (slow[0].status, slow[0].killers) == ("survived", ()), (slow[0].status, slow[0].reason)
