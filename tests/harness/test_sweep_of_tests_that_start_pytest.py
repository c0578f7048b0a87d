"""A swept case that starts a pytest session of its own (a plugin's test suite does) is judged like any other.

The sweep's batch session is driven through its environment (``SEAMGATE_SWEEP_PLAN``, and
``PYTEST_PLUGINS`` naming the sweep plugin). A case that starts ``python -m pytest`` with the
environment it inherited used to hand both to that inner session, which then ran the whole plan
itself: it collected none of the plan's cases, so it wrote an "every case missing" result for every
mutant (and for the clean check) into the batch's results, over the real ones, and ran none of its
own tests. The mutants came back OWED ("N reaching case(s) were not collected in the trampolined
copy") and the clean check's red cases were lost, so a case the plan made red counted as a killer.
The seam's own plugin tests (``tests/plugin``) start pytest this way: the 79 OWED mutants of
``seam/stats.py``, ``monitor.py``, ``testing.py`` and ``pytest_plugin.py`` in docs/mutation-score.md.
"""

from __future__ import annotations

import pytest

pytest.importorskip("mutmut", reason="mutmut 3 is in the test extra (pip install -e '.[test]')")

from reports.mutants import SweepResult  # noqa: E402
from tests.reports.fixture_projects import sweep_calc, write_project  # noqa: E402

pytestmark = pytest.mark.slow

INNER = "from calc.ops import add, double\n\n\ndef test_inner():\n    assert add(2, 3) == 5\n    assert double(4) == 8\n"
PROJECT = {
    "pyproject.toml": "[tool.seamgate]\n",
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n\n\ndef double(x):\n    return 2 * x\n",
    "tests/__init__.py": "",
    "tests/test_ops.py": (
        "import os\nimport subprocess\nimport sys\nfrom pathlib import Path\n\n"
        "from calc.ops import add\n\n"
        "ROOT = Path(__file__).resolve().parents[1]\n\n\n"
        "def test_add():\n    assert add(1, 2) == 3\n\n\n"
        # what tests/plugin does: a pytest session of its own, in the environment this case inherited
        "def test_add_in_a_pytest_session_of_its_own(tmp_path):\n"
        f"    (tmp_path / 'test_inner.py').write_text({INNER!r})\n"
        "    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(ROOT), os.environ.get('PYTHONPATH', '')])}\n"
        "    done = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', str(tmp_path)],\n"
        "                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)\n"
        "    assert done.returncode == 0, done.stdout + done.stderr\n"
    ),
}
INNER_CASE = "tests/test_ops.py::test_add_in_a_pytest_session_of_its_own"
BOTH = ("tests/test_ops.py::test_add", INNER_CASE)


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> SweepResult:
    # the full kill matrix: the case that starts pytest and the inner one both kill `a - b`
    return sweep_calc(write_project(tmp_path_factory.mktemp("sweep") / "calc", PROJECT), all_killers=True)


def test_every_mutant_is_decided_on_the_cases_that_start_pytest(swept: SweepResult) -> None:
    # one batch session for all of them: a mutant run before another's inner sessions must keep its result
    assert len(swept.mutants) >= 3, "too few mutants to share a batch: the test is meaningless"
    assert [(m.id, m.status, m.reason) for m in swept.mutants if m.status == "owed"] == []


def test_a_mutant_seen_only_by_the_inner_session_is_killed_by_the_case_that_started_it(swept: SweepResult) -> None:
    doubles = [m for m in swept.mutants if "x_double" in m.id]
    assert doubles
    assert {m.id: (m.status, m.killers) for m in doubles} == {m.id: ("killed", (INNER_CASE,)) for m in doubles}


def test_a_case_that_starts_pytest_kills_the_mutant_its_inner_session_sees(swept: SweepResult) -> None:
    minus = [m for m in swept.mutants if "a - b" in m.diff]
    assert len(minus) == 1
    assert (minus[0].status, minus[0].killers) == ("killed", BOTH)


def test_the_clean_check_of_the_trampolined_copy_stays_green(swept: SweepResult) -> None:
    # a case red with no mutant active is never a killer: the sweep notes it; here none may be red
    assert swept.facts.get("clean_red", []) == []
