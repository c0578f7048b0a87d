"""One registry of arms (``seam/arms.py``): the validator and the pytest plugins know the same arms,
and an arm with no backend in this build (rocm) is OWED with that reason, never a pytest usage error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SUITE = {
    "test_arm.py": (
        "import pytest\n\n\n"
        "def test_uses_backend(backend):\n    assert backend is not None\n\n\n"
        "@pytest.mark.arm('rocm')\ndef test_rocm_only():\n    pass\n\n\n"
        "def test_plain():\n    pass\n"
    ),
}


def _pytest(tmp_path: Path, arms: str) -> subprocess.CompletedProcess[str]:
    for name, text in SUITE.items():
        (tmp_path / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SEAM_"))}
    env.update(PYTHONPATH=str(ROOT), SEAM_ARMS=arms)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:seamgate",
                           "-p", "seam.pytest_plugin", "-W", "ignore"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_a_gate_arm_is_an_arm_the_plugins_know_and_both_plugins_read_one_registry() -> None:
    import seam.arms as arms
    import harness.gates.model as model
    import seam.pytest_plugin as seams
    import seamgate_plugin as lazy

    assert model.ARM_NAMES is arms.ARM_NAMES
    assert seams.KNOWN_ARMS == arms.ARM_NAMES and lazy.KNOWN_ARMS == arms.ARM_NAMES
    assert seams.PARAMETRIZED == lazy.PARAMETRIZED == arms.PARAMETRIZED
    assert set(arms.PARAMETRIZED) | set(arms.NO_BACKEND) == set(arms.ARM_NAMES)
    assert not set(arms.PARAMETRIZED) & set(arms.NO_BACKEND)


@pytest.mark.slow
def test_the_rocm_arm_has_no_backend_here_so_its_cases_are_owed_with_that_reason_not_a_usage_error(
        tmp_path: Path) -> None:
    done = _pytest(tmp_path, "rocm")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out  # was 4: pytest.UsageError "SEAM_ARMS names unknown arm(s) ['rocm']"
    assert "2 skipped" in out and "1 passed" in out, out
    assert out.count("OWED: no backend for arm 'rocm' in this build") == 2, out


@pytest.mark.slow
def test_unset_seam_arms_still_parametrizes_only_the_arms_with_a_backend(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "")
    out = done.stdout + done.stderr
    assert "test_uses_backend[rocm]" not in out
    assert done.returncode == 0, out
