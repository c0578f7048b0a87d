"""A test on ``torch.cuda`` that leaves a side stream current leaves the default stream current for the tests after.

``torch.cuda.graph``'s ``__exit__`` exits its stream context only after ``capture_end`` returns, so a capture CUDA
refuses at its end leaves the capture's stream current. On a GPU the process keeps it for the next test, where the
emulated arm makes its device fresh for each: after the NCCL library's refused-communicator test, the refused-begin
file's "capture on the default stream" began on the leftover stream instead of being refused, and the H100's process
ended (session 40, docs/torch-cuda.md). The ``torch_cuda`` fixture's teardown (``seam.pytest_plugin``, the user's
plugin too) makes the default stream current again, before its generator check draws."""

from __future__ import annotations

import pytest
import torch

from seam import pytest_plugin
from seam.cuda_backend import end_generator_capture
from seam.pytest_plugin import selected_arms, torch_cuda_for


@pytest.mark.parametrize("arm", selected_arms())  # the arms this run selects, as the torch_cuda fixture's
def test_a_refused_end_inside_torch_cuda_graph_leaves_the_default_stream_to_the_next_test(
        arm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    check = pytest_plugin._end_a_capturing_generator

    def seeing_the_stream() -> None:  # the fixture's last step, still on the arm: what the next test would find
        seen.append(torch.cuda.current_stream() == torch.cuda.default_stream())
        check()
    monkeypatch.setattr(pytest_plugin, "_end_a_capturing_generator", seeing_the_stream)

    fixture = torch_cuda_for(arm)
    next(fixture)  # the test's body, as the torch_cuda fixture runs it
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    x = torch.ones(2, device="cuda")
    torch.cuda.synchronize()
    with pytest.raises(RuntimeError, match="operation failed due to a previous error during capture"):
        with torch.cuda.graph(torch.cuda.CUDAGraph(), stream=side):
            with pytest.raises(RuntimeError, match="operation not permitted when stream is capturing"):
                x.sum().item()  # invalidates the capture: its end is refused
    end_generator_capture("cuda")  # torch 2.11 leaves the generator capturing after a refused end
    assert torch.cuda.current_stream() == side  # torch left the capture's stream current
    with pytest.raises(StopIteration):
        next(fixture)  # the fixture's teardown
    assert seen == [True]
