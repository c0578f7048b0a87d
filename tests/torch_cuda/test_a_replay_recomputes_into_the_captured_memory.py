"""Capture records and a replay recomputes, into the memory the capture used: inputs refreshed in
place are seen, a reallocated input is not (the old address is baked), graph-born buffers are
garbage until the first replay, random draws differ from replay to replay, and host work in the
body runs once."""

from __future__ import annotations

import math

import torch


def _graph(body):  # type: ignore[no-untyped-def]
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = body()
    return g, out


def test_an_input_refreshed_in_place_is_seen_by_the_replay(emulated: None) -> None:
    x = torch.full((3,), 2.0, device="cuda")
    g, y = _graph(lambda: x * 10)
    x.fill_(5.0)
    g.replay()
    assert y.tolist() == [50.0] * 3


def test_a_reallocated_input_is_not_seen_the_old_address_is_baked(emulated: None) -> None:
    x = torch.full((3,), 2.0, device="cuda")
    g, y = _graph(lambda: x * 10)
    x = torch.full((3,), 5.0, device="cuda")  # a new buffer under the same name
    g.replay()
    assert y.tolist() == [20.0] * 3


def test_a_buffer_made_in_the_capture_holds_garbage_until_the_first_replay(emulated: None) -> None:
    x = torch.ones(3, device="cuda")
    g, y = _graph(lambda: x + 1)
    assert all(math.isnan(v) for v in y.tolist())
    g.replay()
    assert y.tolist() == [2.0] * 3


def test_random_draws_differ_from_replay_to_replay(emulated: None) -> None:
    torch.cuda.manual_seed(0)
    g, r = _graph(lambda: torch.rand(8, device="cuda"))
    g.replay()
    first = r.clone()
    g.replay()
    assert not torch.equal(first, r)


def test_the_device_generator_state_round_trips(emulated: None) -> None:
    torch.cuda.manual_seed(7)
    state = torch.cuda.get_rng_state()
    a = torch.rand(4, device="cuda")
    torch.cuda.set_rng_state(state)
    assert torch.equal(a, torch.rand(4, device="cuda"))


def test_host_work_in_the_body_runs_once_at_capture(emulated: None) -> None:
    h = torch.zeros(1)
    x = torch.ones(2, device="cuda")

    def body() -> None:
        h.add_(1)
        x.add_(1)

    g, _ = _graph(body)
    g.replay()
    g.replay()
    assert h.tolist() == [1.0] and x.tolist() == [3.0, 3.0]


def test_make_graphed_callables_matches_eager_forward_and_backward(emulated: None) -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).cuda()
    sample = torch.randn(3, 4, device="cuda", requires_grad=True)
    graphed = torch.cuda.make_graphed_callables(model, (sample,))
    for _ in range(3):
        a = torch.randn(3, 4, device="cuda", requires_grad=True)
        b = a.detach().clone().requires_grad_()
        out = graphed(a)
        out.sum().backward()
        ref = model(b)
        ref.sum().backward()
        assert torch.allclose(out, ref)
        assert torch.allclose(a.grad, b.grad)


def test_a_graph_replays_unchanged_when_a_user_mode_watches(emulated: None) -> None:
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: list[str] = []

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = torch.ones(2, device="cuda")
    g, y = _graph(lambda: x * 2)
    with Count():
        g.replay()  # a GPU replay dispatches no tensor operation
    assert seen == [] and y.tolist() == [2.0, 2.0]
