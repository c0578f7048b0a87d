"""Shared pieces of the seam suite: a child-process runner and fresh counters for every test."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]


def run_child(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (switches are read once per process)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=full_env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def no_grad():
    with torch.no_grad():
        yield


@pytest.fixture(autouse=True)
def fresh_counters():
    """Every test starts from zeroed process-wide counters."""
    from seam import reset_graph_break_stats, reset_step_input_stats

    reset_graph_break_stats()
    reset_step_input_stats()
    yield
