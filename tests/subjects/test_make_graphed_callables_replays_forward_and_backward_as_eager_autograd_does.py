"""``torch.cuda.make_graphed_callables``, torch's own code, unmodified, through its public API on both arms.

A graphed callable runs its forward as one CUDA graph inside one autograd node, whose backward
replays a second graph; new inputs are copied into the static inputs it captured with. Every case
takes the ``torch_cuda`` fixture: ``[cpu-emulated]`` runs inside ``seam.emulate_cuda()`` (torch's
Python above ``torch.cuda.CUDAGraph`` runs as it is), ``[cuda]`` on the GPU.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

N = 16


def _step_input(step: int, *shape: int) -> torch.Tensor:
    count = 1
    for s in shape:
        count *= s
    return (torch.linspace(-2.0, 2.0, count, device="cuda").reshape(shape) * (step + 1) + 0.25 * step).detach()


def _f(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x * w) + w.sin() * x


def _module(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).cuda()


def test_a_graphed_function_gives_eager_outputs_and_input_gradients_at_every_call_with_new_inputs(torch_cuda: str) -> None:
    w = torch.full((N,), 0.5, device="cuda", requires_grad=True)
    graphed = torch.cuda.make_graphed_callables(_f, (torch.zeros(N, device="cuda", requires_grad=True), w))
    for step in range(4):
        x = _step_input(step, N).requires_grad_(True)
        gw = w.detach().clone().requires_grad_(True)
        out = graphed(x, w)
        grad_x, grad_w = torch.autograd.grad(out, (x, w), torch.ones_like(out))
        ex = x.detach().clone().requires_grad_(True)
        expected = _f(ex, gw)
        e_grad_x, e_grad_w = torch.autograd.grad(expected, (ex, gw), torch.ones_like(expected))
        torch.cuda.synchronize()
        assert torch.equal(out, expected.detach()), f"forward of call {step} differs from eager"
        assert torch.equal(grad_x, e_grad_x) and torch.equal(grad_w, e_grad_w), f"backward of call {step} differs"


def test_a_graphed_module_gives_eager_outputs_and_parameter_gradients_at_every_training_step(torch_cuda: str) -> None:
    model, control = _module(), _module()
    graphed = torch.cuda.make_graphed_callables(model, (torch.zeros(4, 8, device="cuda", requires_grad=True),))
    for step in range(3):
        model.zero_grad(set_to_none=True)
        control.zero_grad(set_to_none=True)
        x = _step_input(step, 4, 8)
        out = graphed(x.clone().requires_grad_(True))
        expected = control(x.clone().requires_grad_(True))
        (out * out).sum().backward()
        (expected * expected).sum().backward()
        torch.cuda.synchronize()
        assert torch.equal(out, expected.detach()), f"forward of step {step} differs from eager"
        for (name, p), q in zip(model.named_parameters(), control.parameters()):
            assert torch.equal(p.grad, q.grad), f"{name}.grad differs from eager at step {step}"


def test_a_parameters_grad_from_a_graphed_backward_is_the_static_gradient_buffer_which_the_next_backward_overwrites(
        torch_cuda: str) -> None:
    """torch's own behaviour, the same on the H200: autograd's AccumulateGrad adopts the detached static
    gradient the backward graph returns, so without ``zero_grad(set_to_none=True)`` between steps the next
    replay overwrites ``.grad`` before adding to it: the sum is twice the last gradient, not the two summed."""
    model, control = _module(3), _module(3)
    graphed = torch.cuda.make_graphed_callables(model, (torch.zeros(4, 8, device="cuda", requires_grad=True),))
    model.zero_grad(set_to_none=True)
    eager_grads = []
    for step in range(2):
        x = _step_input(step, 4, 8)
        graphed(x.clone().requires_grad_(True)).square().sum().backward()
        control.zero_grad(set_to_none=True)
        control(x.clone().requires_grad_(True)).square().sum().backward()
        eager_grads.append([q.grad.clone() for q in control.parameters()])
    torch.cuda.synchronize()
    for p, first, last in zip(model.parameters(), *eager_grads):
        assert torch.equal(p.grad, last + last) and not torch.equal(p.grad, first + last)


def test_the_functions_python_runs_only_at_warmup_and_capture_never_when_the_graph_replays(torch_cuda: str) -> None:
    calls = []

    def counted(x: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return x * 3.0

    graphed = torch.cuda.make_graphed_callables(counted, (torch.zeros(N, device="cuda", requires_grad=True),),
                                                num_warmup_iters=2)
    assert len(calls) == 3  # two warmups and one capture
    for step in range(3):
        out = graphed(_step_input(step, N).requires_grad_(True))
        torch.cuda.synchronize()
        assert torch.equal(out, _step_input(step, N) * 3.0)
    assert len(calls) == 3


def test_each_call_replays_into_the_same_static_output_so_a_kept_output_is_overwritten(torch_cuda: str) -> None:
    graphed = torch.cuda.make_graphed_callables(_f, (torch.zeros(N, device="cuda", requires_grad=True),
                                                     torch.ones(N, device="cuda", requires_grad=True)))
    w = torch.ones(N, device="cuda", requires_grad=True)
    first = graphed(_step_input(0, N).requires_grad_(True), w)
    first_values = first.detach().clone()
    second = graphed(_step_input(1, N).requires_grad_(True), w)
    torch.cuda.synchronize()
    assert first.data_ptr() == second.data_ptr()
    assert torch.equal(first, second) and not torch.equal(first, first_values)


def test_a_graphed_module_in_eval_mode_runs_its_eager_forward_and_back_in_train_mode_replays(torch_cuda: str) -> None:
    calls = []

    class Counted(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(8, 8)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            calls.append(self.training)
            return self.lin(x).relu()

    torch.manual_seed(1)
    model = Counted().cuda()
    graphed = torch.cuda.make_graphed_callables(model, (torch.zeros(2, 8, device="cuda", requires_grad=True),))
    captured = len(calls)
    x = _step_input(1, 2, 8)
    model.eval()
    with torch.no_grad():
        eval_out = graphed(x)
    assert calls[captured:] == [False], "eval mode must run the module's own forward"
    model.train()
    train_out = graphed(x.clone().requires_grad_(True))
    torch.cuda.synchronize()
    assert calls[captured:] == [False], "train mode must replay the graph, not run forward"
    assert torch.equal(train_out.detach(), eval_out)


def test_an_input_the_function_never_uses_is_refused_unless_allow_unused_input_and_then_has_no_gradient(torch_cuda: str) -> None:
    def ignores_y(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * 2.0

    samples = (torch.zeros(N, device="cuda", requires_grad=True), torch.zeros(N, device="cuda", requires_grad=True))
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        torch.cuda.make_graphed_callables(ignores_y, samples)
    graphed = torch.cuda.make_graphed_callables(ignores_y, samples, allow_unused_input=True)
    x = _step_input(2, N).requires_grad_(True)
    y = torch.ones(N, device="cuda", requires_grad=True)
    graphed(x, y).sum().backward()
    torch.cuda.synchronize()
    assert torch.equal(x.grad, torch.full((N,), 2.0, device="cuda"))
    assert y.grad is None


def test_only_sample_arguments_that_require_grad_get_a_gradient_from_the_backward_graph(torch_cuda: str) -> None:
    graphed = torch.cuda.make_graphed_callables(_f, (torch.zeros(N, device="cuda"),  # x: no gradient wanted
                                                     torch.ones(N, device="cuda", requires_grad=True)))
    x = _step_input(3, N)
    w = torch.full((N,), 0.75, device="cuda", requires_grad=True)
    graphed(x, w).sum().backward()
    ew = w.detach().clone().requires_grad_(True)
    _f(x, ew).sum().backward()
    torch.cuda.synchronize()
    assert x.grad is None
    assert torch.equal(w.grad, ew.grad)


def test_sample_arguments_must_all_be_tensors(torch_cuda: str) -> None:
    with pytest.raises(AssertionError, match="sample_args for each callable must contain only Tensors"):
        torch.cuda.make_graphed_callables(lambda x, k: x * k, (torch.zeros(N, device="cuda", requires_grad=True), 2.0))


def test_a_module_with_a_hook_or_a_buffer_that_requires_grad_is_refused(torch_cuda: str) -> None:
    hooked = _module()
    hooked.register_forward_hook(lambda *a: None)
    sample = (torch.zeros(4, 8, device="cuda", requires_grad=True),)
    with pytest.raises(AssertionError, match="Modules must not have hooks registered"):
        torch.cuda.make_graphed_callables(hooked, sample)
    buffered = _module()
    buffered.register_buffer("scale", torch.ones(4, device="cuda", requires_grad=True))
    with pytest.raises(AssertionError, match="only parameters may be trainable"):
        torch.cuda.make_graphed_callables(buffered, sample)


def test_a_tuple_of_callables_graphs_a_chain_whose_outputs_and_gradients_match_eager(torch_cuda: str) -> None:
    first, second = _module(2), nn.Linear(4, 2).cuda()
    c_first, c_second = _module(2), nn.Linear(4, 2).cuda()
    c_second.load_state_dict(second.state_dict())
    g_first, g_second = torch.cuda.make_graphed_callables(
        (first, second), ((torch.zeros(4, 8, device="cuda", requires_grad=True),),
                          (torch.zeros(4, 4, device="cuda", requires_grad=True),)))
    for step in range(3):
        for m in (first, second, c_first, c_second):
            m.zero_grad(set_to_none=True)
        x = _step_input(step, 4, 8)
        out = g_second(g_first(x.clone().requires_grad_(True)))
        expected = c_second(c_first(x.clone().requires_grad_(True)))
        out.square().mean().backward()
        expected.square().mean().backward()
        torch.cuda.synchronize()
        assert torch.equal(out, expected.detach()), f"forward of step {step} differs"
        for p, q in zip([*first.parameters(), *second.parameters()], [*c_first.parameters(), *c_second.parameters()]):
            assert torch.equal(p.grad, q.grad), f"a gradient of step {step} differs"


def test_an_output_without_a_gradient_is_replayed_and_adds_nothing_to_the_backward(torch_cuda: str) -> None:
    def two_outputs(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x * 2.0, (x.detach() > 0).float()

    graphed = torch.cuda.make_graphed_callables(two_outputs, (torch.zeros(N, device="cuda", requires_grad=True),))
    x = _step_input(0, N).requires_grad_(True)
    doubled, positive = graphed(x)
    (doubled.sum() + positive.sum()).backward()  # the comparison's gradient is zero, as in eager
    torch.cuda.synchronize()
    assert torch.equal(positive, (_step_input(0, N) > 0).float())
    assert torch.equal(x.grad, torch.full((N,), 2.0, device="cuda"))
