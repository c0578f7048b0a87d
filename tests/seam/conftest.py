"""Shared pieces of the seam suite: a child-process runner and fresh counters for every test."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest
import torch

from harness.zygote import run_python

ROOT = Path(__file__).resolve().parents[2]


def run_child(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (switches are read once per process); in a seamgate run,
    one forked from the run's zygote, with torch already loaded (``harness/zygote.py``)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return run_python(["-c", textwrap.dedent(code)], env=full_env, timeout=120)


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
