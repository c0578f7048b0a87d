"""``--all-killers``: a killed mutant's case that runs past a quarter of its own limit is PARKED: its child runs
on alone until the case ends (or reaches its limit: cut, a killer), while a new child runs the mutant's cases
left and the session goes on to its next mutants (issue 26: cachetools' threading tests, waiting on their own
10 s timeouts under a mutant that breaks the locking, held the whole session for each cut). A parked case is
judged as before: failing, a killer; passing, not; past its own limit, cut and a killer.

The proof that the session went on is an ORDER, not a time: each case appends to a log, and another
mutant's case runs while the parked ones still sleep.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mutmut", reason="mutmut 3 is in the test extra (pip install -e '.[test]')")

from harness.rows import time_limits  # noqa: E402
from tests.harness.test_sweep_stops_at_first_killer import MINUS, mutant, sweep  # noqa: E402
from tests.reports.fixture_projects import write_project  # noqa: E402

pytestmark = pytest.mark.slow

FAST, SLOW_RED, SLOW_GREEN = ("tests/test_ops.py::test_add_fast", "tests/test_ops.py::test_add_slow_red",
                              "tests/test_ops.py::test_add_slow_green")
OTHER = "tests/test_ops.py::test_mul"


def project(log: Path, wait: str = "wait_for_another_other()") -> dict[str, str]:
    # under an add() mutant: test_add_fast fails at once (the kill; the slow cases take 0.05 s in the
    # baseline, so they run after it); then each slow case waits up to WINDOW s for another mutant's case
    # to log 'other' (so the order, not the load, decides when it ends; ``wait`` replaces that) and one
    # fails, one passes; test_mul (mul()'s mutants) only logs
    helpers = (
        f"LOG = {str(log)!r}\n\n\n"
        "def log(word):\n    with open(LOG, 'a') as f:\n        f.write(word + '\\n')\n\n\n"
        "def others():\n    with open(LOG) as f:\n        return f.read().split().count('other')\n\n\n"
        f"def wait_for_another_other():\n    seen, deadline = others(), time.monotonic() + {WINDOW}\n"
        "    while others() == seen and time.monotonic() < deadline:\n        time.sleep(0.05)\n\n\n")
    return {
        "pyproject.toml": "[tool.seamgate]\n",
        "calc/__init__.py": "",
        "calc/ops.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
        "tests/__init__.py": "",
        "tests/test_ops.py": (
            "import time\n\nfrom calc.ops import add, mul\n\n\n" + helpers +
            "def test_add_fast():\n    assert add(1, 2) == 3\n\n\n"
            "def test_add_slow_red():\n    time.sleep(0.05)\n    if add(2, 2) != 4:\n        log('slow-start')\n"
            f"        {wait}\n        log('slow-end')\n    assert add(2, 2) == 4\n\n\n"
            "def test_add_slow_green():\n    time.sleep(0.05)\n    if add(2, 2) != 4:\n"
            f"        {wait}\n\n\n"
            "def test_mul():\n    log('other')\n    assert mul(2, 3) == 6\n"),
    }


#: How long a slow case waits for another mutant's case; its own limit is 10 x 0.05 s + CASE_CONSTANT (8 s),
#: so it is parked near 2.1 s, and the next mutant's case runs near 4.3 s, well inside the window.
WINDOW = 7.0


def test_the_session_goes_on_while_a_killed_mutants_slow_cases_run_on_and_they_are_judged_as_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time_limits, "CASE_CONSTANT", 8.0)  # the slow cases end before their own limit
    log = tmp_path / "log.txt"
    result = sweep(write_project(tmp_path / "calc", project(log)), all_killers=True, jobs=1)
    minus = mutant(result, MINUS)
    assert "+    return a - b\n" in minus.diff  # the premise
    assert (minus.status, minus.killers) == ("killed", (FAST, SLOW_RED)), (minus.status, minus.reason)
    assert SLOW_GREEN in minus.covered_by and "its own limit" not in minus.reason
    # the baseline and the clean check log 'other' first; then a parked slow case was still waiting when the
    # other mutant's case ran (a slow case ends after it: the session had gone on; held, it would have
    # waited its whole window first)
    lines = log.read_text().split()
    after_start = lines[lines.index("slow-start"):]
    assert "other" in after_start and "slow-end" in after_start[after_start.index("other"):], lines


def test_a_parked_case_past_its_own_limit_is_cut_and_a_killer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time_limits, "CASE_CONSTANT", 1.0)  # own limit 1.5 s: a 4 s sleep passes it
    files = project(tmp_path / "log.txt", wait="time.sleep(4.0)")
    result = sweep(write_project(tmp_path / "calc", files), all_killers=True, jobs=1)
    minus = mutant(result, MINUS)
    assert (minus.status, minus.killers) == ("killed", (FAST, SLOW_RED, SLOW_GREEN)), (minus.status, minus.reason)
    assert SLOW_GREEN in minus.reason and "its own limit" in minus.reason

