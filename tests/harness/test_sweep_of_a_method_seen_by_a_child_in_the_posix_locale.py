"""A method's mutant is active in a child that a case starts under the POSIX locale.

mutmut names a method's mutants with "ǁ" (``calc.ops.xǁCalcǁadd__mutmut_1``), and its trampoline takes the
active name from ``MUTANT_UNDER_TEST``. A child started with ``LC_ALL=C`` and UTF-8 mode off decodes that
variable as ASCII (``\\udcc7\\udc81`` for "ǁ"), so the name matched no mutant and the child ran the original
code: every method mutant that only such a child sees survived (``harness/reach/reach.py``'s
``Reach.read`` mutants, killed only by its POSIX-locale case, docs/mutation-score.md). The sweep hands the
child the name in an ASCII form too (``SEAMGATE_MUTANT_HEX``), and the trampolined module reads it back.
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
    "calc/ops.py": "class Calc:\n    def add(self, a, b):\n        return a + b\n",
    "tests/__init__.py": "",
    "tests/test_ops.py": (
        "import os\nimport subprocess\nimport sys\nfrom pathlib import Path\n\n"
        "ROOT = Path(__file__).resolve().parents[1]\n\n\n"
        "def test_add_in_a_child_under_the_posix_locale():\n"
        "    env = {k: v for k, v in os.environ.items() if not k.startswith(('LC_', 'LANG', 'PYTHONUTF8'))}\n"
        "    env.update(LC_ALL='C', PYTHONCOERCECLOCALE='0', PYTHONUTF8='0', PYTHONPATH=str(ROOT))\n"
        "    code = 'from calc.ops import Calc; print(Calc().add(2, 3))'\n"
        "    done = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, timeout=60)\n"
        "    assert done.returncode == 0, done.stderr\n"
        "    assert done.stdout.strip() == '5'\n"
    ),
}
CASE = "tests/test_ops.py::test_add_in_a_child_under_the_posix_locale"


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> SweepResult:
    return sweep_calc(write_project(tmp_path_factory.mktemp("sweep") / "calc", PROJECT))


def test_the_methods_mutant_is_killed_by_the_case_whose_child_runs_it(swept: SweepResult) -> None:
    minus = [m for m in swept.mutants if "a - b" in m.diff]
    assert len(minus) == 1 and "ǁ" in minus[0].id
    assert (minus[0].status, minus[0].killers) == ("killed", (CASE,))
