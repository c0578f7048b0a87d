"""A test on ``torch.cuda`` that leaves the default CUDA generator capturing fails its own teardown, and the tests
after it still draw.

After a capture CUDA refused at its end, every later eager draw on the device raises "Offset increment outside
graph capture encountered unexpectedly." for the rest of a GPU's process (H100, session 23: one such test turned
20 later cases of its shard red, none of them at fault). The ``torch_cuda`` fixture's teardown (``seam.pytest_plugin``,
the user's plugin too) names the test that did it and ends that capture. Run on the emulated arm, in a pytest of
its own, as a user's suite would run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SUITE = '''
import torch


def _a_refused_end():
    graph, capturing, side = torch.cuda.CUDAGraph(), torch.cuda.Stream(), torch.cuda.Stream()
    x = torch.zeros(4, device="cuda")
    capturing.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(capturing):
        graph.capture_begin()
        side.wait_stream(capturing)
        with torch.cuda.stream(side):
            x.add_(1)  # a fork never joined: CUDA refuses the end
        try:
            graph.capture_end()
        except RuntimeError:
            pass


def test_one_leaves_the_generator_capturing(torch_cuda):
    _a_refused_end()


def test_two_draws_after_it(torch_cuda):
    assert torch.randn(2, device="cuda").shape == (2,)


def test_three_draws_before_and_after_a_clean_capture(torch_cuda):
    torch.randn(2, device="cuda")
'''


def test_the_test_that_left_it_errors_in_teardown_naming_the_capture_and_the_others_pass(tmp_path: Path) -> None:
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SEAM_"))}
    env.update(PYTHONPATH=str(ROOT), SEAM_ARMS="cpu-emulated")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "seam.pytest_plugin",
                           "-W", "ignore", "-rE"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert "3 passed, 1 error" in out, out[-3000:]
    assert "ERROR test_suite.py::test_one_leaves_the_generator_capturing[cpu-emulated]" in out, out[-3000:]
    assert "left the default CUDA generator capturing" in out
