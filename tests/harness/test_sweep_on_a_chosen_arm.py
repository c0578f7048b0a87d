"""`seamgate sweep --arm ARM` judges every mutant on that platform arm, and a kept outcome is per arm.

A sweep's runs export the arm as ``SEAM_ARMS``, as a gate's do. It used to be fixed at
``cpu-emulated``: a module only the cuda arm reaches (``seam/cuda_backend.py``) came out "no
coverage" on the GPU machine too, since the seam plugin deselected every cuda case. Here a case
checks the sum only on the arm ``cuda``, so a mutant of ``add`` is killed on that arm and survives on
the default one; a sweep on one arm never reuses the other arm's outcomes.
"""

from __future__ import annotations

import pytest

pytest.importorskip("mutmut", reason="mutmut 3 is in the test extra (pip install -e '.[test]')")

from harness.cli.main import main  # noqa: E402
from tests.reports.fixture_projects import sweep_calc, write_project  # noqa: E402

pytestmark = pytest.mark.slow

PROJECT = {
    "pyproject.toml": "[tool.seamgate]\n",
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    "tests/__init__.py": "",
    "tests/test_ops.py": (
        "import os\n\nfrom calc.ops import add\n\n\n"
        "def test_add_on_the_fast_arm_only():\n"
        "    total = add(2, 3)\n"
        "    if os.environ.get('SEAM_ARMS') == 'cuda':\n"
        "        assert total == 5\n"
    ),
}


def statuses(root, arm=None) -> dict[str, str]:
    return {m.id: m.status for m in sweep_calc(root, **({} if arm is None else {"arm": arm})).mutants}


def test_a_mutant_killed_only_on_the_chosen_arm_is_killed_there_and_survives_elsewhere(tmp_path) -> None:
    root = write_project(tmp_path / "calc", PROJECT)
    default = statuses(root)
    on_cuda = statuses(root, "cuda")
    assert default and set(default.values()) == {"survived"}
    assert set(on_cuda) == set(default) and set(on_cuda.values()) == {"killed"}
    assert set(statuses(root).values()) == {"survived"}  # the cuda arm's kept outcomes are not reused here


def test_an_unknown_arm_is_refused_by_name(tmp_path, capsys) -> None:
    root = write_project(tmp_path / "calc", PROJECT)
    assert main(["--project", str(root), "sweep", "--arm", "tpu"]) == 2
    assert "argument --arm: invalid choice: 'tpu' (choose from 'cpu-emulated', 'cuda', 'rocm')" in capsys.readouterr().err
