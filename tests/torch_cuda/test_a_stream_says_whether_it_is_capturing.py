"""``Stream.is_capturing()`` says whether the stream's work goes to an open capture.

torch's optimizers ask it on every ``step()`` (``torch.accelerator.current_stream().is_capturing()`` in
``Optimizer._accelerator_graph_capture_health_check`` since torch 2.12), so a stream without it breaks
every Adam step on the device, captured or not. PyTorch's own ``test_graph_is_current_stream_capturing``
and ``test_graph_optims_*`` tests call it.
"""

from __future__ import annotations

import pytest
import torch

needs_is_capturing = pytest.mark.skipif(
    not hasattr(torch._C.Stream, "is_capturing"), reason="torch.Stream.is_capturing needs torch >= 2.12")


@needs_is_capturing
def test_a_stream_is_capturing_between_capture_begin_and_end_only(torch_cuda: str) -> None:
    side = torch.cuda.Stream()
    x = torch.ones(4, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(side):
        assert side.is_capturing() is False
        g.capture_begin()
        assert side.is_capturing() is True
        assert torch.accelerator.current_stream().is_capturing() is True
        assert torch.cuda.default_stream().is_capturing() is False
        x.add_(1)
        g.capture_end()
    assert side.is_capturing() is False
    assert torch.cuda.current_stream().is_capturing() is False


def test_a_capturable_adam_step_is_captured_and_its_replays_match_eager_steps(torch_cuda: str) -> None:
    torch.manual_seed(0)
    grads = [torch.randn(3, device="cuda") for _ in range(4)]
    control = torch.nn.Parameter(torch.ones(3, device="cuda"))
    graphed = torch.nn.Parameter(torch.ones(3, device="cuda"))
    control_opt = torch.optim.Adam([control], lr=0.1)
    graphed_opt = torch.optim.Adam([graphed], lr=0.1, capturable=True)
    for i, grad in enumerate(grads):
        control.grad = grad.clone()
        control_opt.step()
    graphed.grad = grads[0].clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        graphed_opt.step()  # warm-up step, eager, makes the optimizer's state
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        graphed_opt.step()
    for grad in grads[1:]:
        graphed.grad.copy_(grad)
        g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(graphed.detach().cpu(), control.detach().cpu())


def test_a_stream_has_is_capturing_exactly_where_torchs_own_stream_has_it(emulated: None) -> None:
    """The emulator follows the torch it runs on: torch 2.11's streams have no ``is_capturing`` (the H200 raised
    AttributeError in PyTorch's ``test_graph_is_current_stream_capturing``), 2.12's and later's have it."""
    has = hasattr(torch._C.Stream, "is_capturing")
    assert hasattr(torch.cuda.Stream(), "is_capturing") is has
    assert hasattr(torch.cuda.current_stream(), "is_capturing") is has
