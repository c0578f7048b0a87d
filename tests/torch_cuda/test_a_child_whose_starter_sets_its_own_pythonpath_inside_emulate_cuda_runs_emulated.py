"""A child started inside ``emulate_cuda()`` runs emulated even when its starter sets ``PYTHONPATH``.

``emulate_cuda()`` exports ``SEAM_EMULATE_CUDA=1`` and puts its start-up hook first on ``PYTHONPATH``.
A starter that builds the child's environment as ``{**os.environ, "PYTHONPATH": <its folder>}`` (the
seam's and drivers' test helpers do) keeps the variable but drops the hook: the child says it is
emulated and runs on the real ``torch.cuda`` (on a CPU-only build: no device at all). Such a starter
passes its environment through ``child_environment``, which puts the hook back inside the block and
leaves the environment as it was outside it, or where the starter took the variable away.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from seam.torch_cuda import ENV, child_environment, emulate_cuda, is_emulating

ROOT = Path(__file__).resolve().parents[2]
#: A folder of the starter's own, after the project on the child's path (it need not exist).
OWN = str(ROOT / "starters-own-folder")
# What the child reports: whether it is emulated, and where a "cuda" tensor lands there.
CHILD = """
import json, torch
from seam.torch_cuda import is_emulating
on = is_emulating()
print(json.dumps([on, str(torch.ones(2, device="cuda").device) if on else None]))
"""


def _child(env: dict[str, str]) -> list[object]:
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"the child failed (exit {done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _starters_env() -> dict[str, str]:
    """The environment as the test helpers build it: the caller's, with ``PYTHONPATH`` replaced."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), OWN])}


@pytest.mark.slow
def test_the_starters_environment_alone_drops_the_hook_so_the_child_is_not_emulated() -> None:
    """The control: without ``child_environment`` the child is not emulated (the check below can fail)."""
    with emulate_cuda():
        env = _starters_env()
        assert env[ENV] == "1", "the precondition: the variable survives the starter"
        assert _child(env) == [False, None]


@pytest.mark.slow
def test_the_child_environment_puts_the_hook_back_so_the_child_runs_emulated() -> None:
    with emulate_cuda():
        env = child_environment(_starters_env())
    assert env["PYTHONPATH"].split(os.pathsep)[-1] == OWN, "the starter's own folder stays on the path"
    assert _child(env) == [True, "cuda:0"]


def test_outside_emulate_cuda_the_child_environment_is_the_starters_unchanged() -> None:
    if is_emulating():
        pytest.skip("the whole process is emulated (SEAM_EMULATE_CUDA=1 or --emulate-cuda): it has no outside")
    for env in (_starters_env(), {**_starters_env(), ENV: "1"}, {"PATH": "/usr/bin", "PYTHONPATH": "/x"}):
        assert child_environment(env) == env


def test_inside_emulate_cuda_a_starter_that_takes_the_variable_away_keeps_its_environment() -> None:
    with emulate_cuda():
        away = {k: v for k, v in _starters_env().items() if k != ENV}
        off = {**_starters_env(), ENV: "0"}
        assert (child_environment(away), child_environment(off)) == (away, off)
        assert child_environment(_starters_env()) != _starters_env(), "the precondition: inside, the hook is added"
