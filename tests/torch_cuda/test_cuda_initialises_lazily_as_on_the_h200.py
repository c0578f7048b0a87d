"""CUDA initialises lazily: a fresh process's ``torch.cuda.is_initialized()`` is False, and ``memory_stats()`` is
empty, until a call that initialises it. Which calls do, and which do not, as the H200 gave it (torch 2.11,
device probe of session 14, ``.probe/s14_probe3.py``: one fresh process a call). The emulator said
initialised from the start, so a test reading ``memory_stats()["..."]`` first thing passed here and raised
``KeyError`` on the H200. Both arms: each call in a fresh child (``SEAM_EMULATE_CUDA=1`` on the emulated arm)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from seam.torch_cuda import child_environment

ROOT = Path(__file__).resolve().parents[2]

INITIALISE = ["torch.cuda.current_stream()", "torch.cuda.default_stream()", "torch.cuda.synchronize()",
              "torch.cuda.mem_get_info()", "torch.cuda.get_device_properties(0)", "torch.cuda.get_device_name()",
              "torch.cuda.get_rng_state()", "torch.cuda.current_device()", "torch.empty(1, device='cuda')",
              "torch.ones(2).cuda()", "torch.cuda.set_device(0)", "torch.cuda.get_device_capability()",
              "torch.cuda.reset_peak_memory_stats()", "torch.cuda.initial_seed()",
              "torch.accelerator.current_device_index()"]
LEAVE = ["torch.cuda.Stream()", "torch.cuda.memory_allocated()", "torch.cuda.memory_stats()", "torch.cuda.empty_cache()",
         "torch.cuda.manual_seed(1)", "torch.cuda.device_count()", "torch.cuda.Event()", "torch.cuda.CUDAGraph()",
         "torch.cuda.graph_pool_handle()", "torch.cuda.is_available()", "torch.cuda.memory_snapshot()",
         "torch.cuda.max_memory_allocated()", "torch.cuda.is_current_stream_capturing()", "torch.cuda.seed()",
         "torch.accelerator.memory_allocated()", "torch.accelerator.memory_stats()"]

CHILD = """
import json, sys, torch
call = sys.argv[1]
before = [torch.cuda.is_initialized(), len(torch.cuda.memory_stats())]
eval(call)
print(json.dumps([before, [torch.cuda.is_initialized(), len(torch.cuda.memory_stats()) > 0]]))
"""


def run(call: str, arm: str) -> list:
    # Inside the emulated arm's block the environment already says SEAM_EMULATE_CUDA=1 with the start-up hook on
    # PYTHONPATH (``child_environment`` keeps it there); the cuda arm's child is told it is not emulated.
    env = child_environment({k: v for k, v in os.environ.items() if k != "SEAM_ARMS"})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    if arm != "cpu-emulated":
        env["SEAM_EMULATE_CUDA"] = "0"
    done = subprocess.run([sys.executable, "-c", CHILD, call], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-1500:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("call", INITIALISE)
def test_these_initialise_cuda(torch_cuda: str, call: str) -> None:
    assert run(call, torch_cuda) == [[False, 0], [True, True]]


@pytest.mark.slow
@pytest.mark.parametrize("call", LEAVE)
def test_these_leave_it_uninitialised_and_the_memory_figures_empty(torch_cuda: str, call: str) -> None:
    assert run(call, torch_cuda) == [[False, 0], [False, False]]
