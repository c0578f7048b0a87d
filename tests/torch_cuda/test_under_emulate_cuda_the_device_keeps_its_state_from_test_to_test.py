"""Under ``pytest --emulate-cuda`` the emulated device lives for the whole session, as a GPU lives for the whole
process: what one test leaves on it, the next test finds. Its caching allocator keeps the segments it cached
(``memory_reserved``, ``memory_snapshot``: PyTorch's own ``test_cuda_graph_allocator_propagates_stream`` passes
on the H200 only because earlier tests left default-pool segments cached), its generator goes on from where it
was, a thread's cuBLAS handle made once serves a later test's capture, and a stream set current stays current.
The emulator once gave every test a fresh device (H200 probe of session 14: three of PyTorch's graph tests
differed on it). The session runs in a child pytest, in file order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SUITE = '''
import torch

LEFT = {}


def test_1_leaves_state_on_the_device():
    x = torch.ones(1000, device="cuda")
    (x[:10].reshape(1, 10) @ x[:10].reshape(10, 1)).sum()  # this thread's cuBLAS handle, made outside any capture
    del x
    LEFT["reserved"] = torch.cuda.memory_reserved()
    assert LEFT["reserved"] > 0  # (the 32 MiB cuBLAS workspace stays allocated too, as on a GPU)
    torch.cuda.manual_seed(5)
    torch.rand(3, device="cuda")
    LEFT["rng"] = torch.cuda.get_rng_state()
    LEFT["stream"] = torch.cuda.Stream()
    torch.cuda.set_stream(LEFT["stream"])


def test_2_finds_it():
    assert torch.cuda.current_stream() == LEFT["stream"], "the stream test 1 set current"
    assert torch.cuda.memory_reserved() == LEFT["reserved"], "the segment test 1 cached"
    assert torch.equal(torch.cuda.get_rng_state(), LEFT["rng"]), "the generator where test 1 left it"
    a = torch.ones(2, 2, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):  # the first matmul of this test, no warm-up: the thread's handle exists
        b = a @ a
    g.replay()
    assert b.sum().item() == 8.0
'''


@pytest.mark.slow
def test_a_test_finds_what_the_test_before_it_left_on_the_emulated_device(tmp_path: Path) -> None:
    (tmp_path / "test_order.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if k not in ("SEAM_EMULATE_CUDA", "SEAM_ARMS")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(tmp_path)]
    import torch

    if not torch.cuda.is_available():  # a CPU torch: the emulated device; on a GPU the same suite runs for real
        args.insert(3, "--emulate-cuda")
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout
