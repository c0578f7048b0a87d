"""A backward node runs on the stream its forward ran on, and the caller's stream is current again after it, as CUDA's
autograd engine does ("Stream semantics of backward passes" in torch's CUDA notes).

PyTorch's own ``test_streaming_backwards_sync``, ``_multiple_streams`` and ``_callback`` passed on the H100 and
failed emulated (session 25: ``evidence/h100-pytorch-test-cuda-all-classes-dfdac4d.xml``): a CPU-only torch's engine
ran every node on the caller's stream. ``seam/torch_cuda/backward_streams.py``.
"""

from __future__ import annotations

from typing import Any

import torch


class _Scaled(torch.autograd.Function):
    """Doubles; keeps the stream its forward and its backward saw."""

    seen: list[tuple[str, Any]] = []

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        _Scaled.seen.append(("forward", torch.cuda.current_stream()))
        return x * 2

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        _Scaled.seen.append(("backward", torch.cuda.current_stream()))
        return grad * 2


def _streams() -> list[Any]:
    seen, _Scaled.seen = _Scaled.seen, []
    return [stream for _, stream in seen]


def test_a_custom_backward_runs_on_its_forwards_side_stream_called_from_the_default_one(torch_cuda: str) -> None:
    side = torch.cuda.Stream()
    x = torch.ones(4, device="cuda", requires_grad=True)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = _Scaled.apply(x)
    torch.cuda.current_stream().wait_stream(side)
    y.sum().backward()
    forward, backward = _streams()
    assert forward == side and backward == side, "the backward ran on the caller's stream, not its forward's"
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    torch.testing.assert_close(x.grad.cpu(), torch.full((4,), 2.0))


def test_a_custom_backward_made_on_the_default_stream_runs_there_when_called_from_a_side_stream(torch_cuda: str) -> None:
    side = torch.cuda.Stream()
    x = torch.ones(4, device="cuda", requires_grad=True)
    y = _Scaled.apply(x).sum()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        grad, = torch.autograd.grad(y, x)
        assert torch.cuda.current_stream() == side, "the caller's stream is not current again after the backward"
    forward, backward = _streams()
    assert forward == torch.cuda.default_stream() and backward == torch.cuda.default_stream()
    torch.testing.assert_close(grad.cpu(), torch.full((4,), 2.0))


def test_a_leafs_hook_runs_on_the_stream_of_its_first_use_and_callbacks_on_the_callers(torch_cuda: str) -> None:
    first, second, caller = torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.Stream()
    x = torch.ones(4, device="cuda", requires_grad=True)
    hooked: list[Any] = []
    x.register_hook(lambda grad: hooked.append(torch.cuda.current_stream()))
    for s in (first, second):
        s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(first):
        a = x.clone()
    with torch.cuda.stream(second):
        b = _Scaled.apply(x)
        second.wait_stream(first)
        loss = (a * b).sum()

    def callback() -> None:
        hooked.append(("callback", torch.cuda.current_stream()))

    loss.register_hook(lambda grad: torch.autograd.Variable._execution_engine.queue_callback(callback))
    caller.wait_stream(second)
    with torch.cuda.stream(caller):
        loss.backward()
        assert torch.cuda.current_stream() == caller
    assert hooked == [first, ("callback", caller)]
    assert _streams() == [second, second]
    torch.testing.assert_close(x.grad.cpu(), torch.full((4,), 4.0))


def test_a_captured_backward_of_a_side_streams_forward_forks_and_joins_it(torch_cuda: str) -> None:
    """The forward's side stream, never forked into the capture, runs its backward node inside it: the engine has it
    wait on the capture's stream (a fork) and the capture's stream wait on it (the join), so the capture ends."""
    side = torch.cuda.Stream()
    x = torch.ones(4, device="cuda", requires_grad=True)
    for _ in range(2):  # warm up the graph's operations outside the capture
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            y = _Scaled.apply(x)
        torch.cuda.current_stream().wait_stream(side)
        torch.autograd.grad(y.sum(), x)
    torch.cuda.synchronize()
    _streams()
    graph = torch.cuda.CUDAGraph()
    capturing = torch.cuda.Stream()
    with torch.cuda.graph(graph, stream=capturing):
        grad, = torch.autograd.grad(y.sum(), x, retain_graph=True)
    assert _streams() == [side]
    grad.zero_()
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(grad.cpu(), torch.full((4,), 2.0))
