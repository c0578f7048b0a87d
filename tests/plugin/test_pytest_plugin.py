"""The pytest plugin: a ``backend`` fixture per platform arm; a missing arm is OWED, never green."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
INSTALLED = any(ep.value == "seam.pytest_plugin" for ep in entry_points(group="pytest11"))

SUITE = '''
import pytest

def test_uses_backend(backend):
    assert backend.name in ("cpu-emulated", "cuda")

@pytest.mark.arm("cuda")
def test_cuda_only():
    pass
'''


def _pytest(tmp_path: Path, arms: str | None) -> str:
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if k != "SEAM_ARMS"}
    if arms is not None:
        env["SEAM_ARMS"] = arms
    # Where seamgate is not installed (a copied tree on a GPU machine) its entry point is missing: load it by name.
    load = [] if INSTALLED else ["-p", "seam.pytest_plugin"]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-rs", "-v", "-p", "no:cacheprovider", *load, str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    return proc.stdout + proc.stderr


def test_the_backend_fixture_runs_once_per_arm_and_a_missing_arm_is_skipped_as_owed(tmp_path: Path) -> None:
    out = _pytest(tmp_path, None)
    assert "test_uses_backend[cpu-emulated] PASSED" in out
    if torch.cuda.is_available():
        assert "test_uses_backend[cuda] PASSED" in out and "test_cuda_only PASSED" in out
    else:
        assert "test_uses_backend[cuda] SKIPPED (OWED: cuda arm needs" in out
        assert "test_cuda_only SKIPPED (OWED: cuda arm needs" in out


def test_seam_arms_restricts_the_arms_and_deselects_tests_of_other_arms(tmp_path: Path) -> None:
    out = _pytest(tmp_path, "cpu-emulated")
    assert "test_uses_backend[cpu-emulated] PASSED" in out
    assert "[cuda]" not in out and "test_cuda_only" not in out
    assert "1 passed, 1 deselected" in out


def test_an_unknown_arm_in_seam_arms_is_a_usage_error_naming_the_known_arms(tmp_path: Path) -> None:
    out = _pytest(tmp_path, "tpu")
    assert "SEAM_ARMS names unknown arm(s) ['tpu']; known arms: cpu-emulated, cuda" in out
