"""A child forked from a seamgate run's zygote (``harness/zygote.py``) inside ``emulate_cuda()`` runs emulated.

Inside a seamgate run a test's "fresh interpreter" child is forked from the run's zygote, which never
runs an interpreter's start-up, so ``SEAM_EMULATE_CUDA=1`` and the start-up hook on the child's
``PYTHONPATH`` (``child_environment``) did not emulate it: measured before issue 24's switch, the child
printed ``is_emulating()`` False. The zygote's child now runs the ``sitecustomize`` its ``PYTHONPATH``
holds, as ``site`` does. A control child without the hook on its path stays on the real ``torch.cuda``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DRIVER = """
import json, os, sys
from harness import zygote
zygote.ZYGOTE = zygote.Zygote.fork(preload=("torch",))
from seam.torch_cuda import child_environment, emulate_cuda
CHILD = ("import json, torch; from seam.torch_cuda import is_emulating; on = is_emulating(); "
         "print(json.dumps([on, str(torch.ones(2, device='cuda').device) if on else None]))")
root, out = sys.argv[1], {}
with emulate_cuda():
    starters = {**os.environ, "PYTHONPATH": root}  # as the seam's and drivers' test helpers build it
    for name, env in (("with the hook", child_environment(starters)), ("without the hook", starters)):
        child = zygote.start_python(["-c", CHILD], env=env, cwd=root)
        done = child.communicate(timeout=120)
        out[name] = [child.forked, done.returncode, json.loads(done.stdout.strip().splitlines()[-1])
                     if done.returncode == 0 else done.stderr[-400:]]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_a_zygote_child_with_the_hook_on_its_path_runs_emulated_and_one_without_does_not() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SEAM_EMULATE_CUDA", None)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(DRIVER), str(ROOT)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["without the hook"] == [True, 0, [False, None]], "the control: no hook, no emulation"
    assert got["with the hook"] == [True, 0, [True, "cuda:0"]]
