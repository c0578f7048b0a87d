"""A child interpreter started from inside ``emulate_cuda()`` runs on the emulated device too (lane
identity runs in children); one started after the block does not."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from seam.torch_cuda import emulate_cuda

CHILD = "import torch; x = torch.ones(2, device='cuda'); print(torch.cuda.is_available(), x.device)"


@pytest.mark.slow
def test_a_child_inherits_the_emulated_device() -> None:
    with emulate_cuda():
        assert os.environ["SEAM_EMULATE_CUDA"] == "1"
        done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "cuda:0"]


@pytest.mark.slow
def test_a_child_started_after_the_block_sees_the_plain_cpu_build() -> None:
    with emulate_cuda():
        pass
    done = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.is_available())"],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == [str(bool(os.environ.get("SEAM_REAL_CUDA_HERE")) or _real_cuda())]


def _real_cuda() -> bool:
    import torch

    return torch.cuda.is_available()
