"""Ops whose results hold a ``None`` or a list of ONE tensor replay like any other, as on CUDA.

A captured ``torch.autograd.grad`` through a convolution whose input needs no gradient runs
``convolution_backward`` with ``output_mask=[False, True, True]``: its result is ``(None, gw, gb)``,
and replay must write ``gw`` and ``gb`` into the two captured gradients (the ``None`` holds no
buffer). A ``_foreach`` op over a one-tensor list returns a one-tensor list, whose ``out=`` overload
takes a LIST: it must capture and replay as a list of several does. Both ran wrong on the emulator
(a shape error at replay; a refused ``out=`` argument at capture) while CUDA replays them
(docs/seam.md, "Known gaps").
"""

from __future__ import annotations

import torch

from seam import Backend, BreakableGraph, CaptureMode, GraphCaptureScope


def capture(backend: Backend, body):
    g = BreakableGraph(backend, CaptureMode.FULL)
    with GraphCaptureScope(backend, backend.default_queue(), g):
        out = body()
    return g, out


def test_the_weight_and_bias_gradients_of_a_convolution_replay_with_the_inputs_of_each_replay(backend: Backend) -> None:
    x = backend.to_device(torch.ones(1, 2, 5))
    w = backend.to_device(torch.full((3, 2, 2), 0.5)).requires_grad_()
    b = backend.to_device(torch.zeros(3)).requires_grad_()

    def grads():
        y = torch.nn.functional.conv1d(x, w, b)
        return torch.autograd.grad(y.sum(), (w, b))

    for _ in range(2):  # warm up outside the capture, as capture_one does
        grads()
    g, (gw, gb) = capture(backend, grads)
    with torch.no_grad():
        x.copy_(backend.to_device(torch.arange(10.0).reshape(1, 2, 5)))
    g.replay()
    want_w, want_b = torch.autograd.grad(torch.nn.functional.conv1d(x, w, b).sum(), (w, b))
    assert torch.equal(gw.cpu(), want_w.cpu()) and torch.equal(gb.cpu(), want_b.cpu())
    assert gb.cpu().tolist() == [4.0, 4.0, 4.0]  # four output positions per channel


def test_a_foreach_op_over_one_tensor_captures_and_replays_into_its_one_output(backend: Backend) -> None:
    xs = [backend.to_device(torch.tensor([4.0, 9.0]))]
    with torch.no_grad():
        torch._foreach_sqrt(xs)  # warm up
        g, roots = capture(backend, lambda: torch._foreach_sqrt(xs))
        xs[0].copy_(backend.to_device(torch.tensor([16.0, 25.0])))
    g.replay()
    assert len(roots) == 1 and roots[0].cpu().tolist() == [4.0, 5.0]
