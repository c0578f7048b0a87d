"""Graph-safe RNG, as CUDA's Philox offsets make it: a replay draws at the offset its generator holds
then and moves it on, so replays differ, re-seeding before a replay repeats it, and a replay draws
what the same eager operation draws from the same state. A generator of one's own takes part once
registered with the graph (``CUDAGraph.register_generator_state``); seeding one inside a capture is
refused in torch's words. Run on both arms (the ``torch_cuda`` fixture)."""

from __future__ import annotations

import pytest
import torch

SEED_IN_CAPTURE = "set_current_seed can be called during stream capture only if new seed is the same"


def _graphed_rand(g: torch.Generator | None) -> tuple[torch.cuda.CUDAGraph, torch.Tensor]:
    graph = torch.cuda.CUDAGraph()
    if g is not None:
        graph.register_generator_state(g)
    with torch.cuda.graph(graph):
        out = torch.rand(16, generator=g, device="cuda")
    return graph, out


def test_replays_of_a_registered_generator_differ_and_a_reseed_repeats_them(torch_cuda: str) -> None:
    g = torch.Generator(device="cuda")
    graph, out = _graphed_rand(g)
    g.manual_seed(42)
    graph.replay()
    first = out.clone()
    graph.replay()
    assert not torch.equal(out, first)
    g.manual_seed(42)
    graph.replay()
    assert torch.equal(out, first)


def test_a_replay_draws_what_the_eager_operation_draws_from_the_same_state(torch_cuda: str) -> None:
    g = torch.Generator(device="cuda")
    graph, out = _graphed_rand(g)
    g.manual_seed(8)
    graph.replay()
    first = out.clone()
    graph.replay()
    second = out.clone()
    g.manual_seed(8)
    assert torch.equal(torch.rand(16, generator=g, device="cuda"), first)
    assert torch.equal(torch.rand(16, generator=g, device="cuda"), second)


def test_a_capture_leaves_the_default_generators_offset_where_it_was(torch_cuda: str) -> None:
    torch.cuda.manual_seed(3)
    control = torch.rand(16, device="cuda")
    torch.cuda.manual_seed(3)
    _graphed_rand(None)
    assert torch.equal(torch.rand(16, device="cuda"), control)


def test_replays_move_the_generator_on_for_the_eager_draws_after_them(torch_cuda: str) -> None:
    g = torch.Generator(device="cuda")
    graph, out = _graphed_rand(g)
    g.manual_seed(5)
    graph.replay()
    after_replay = torch.rand(16, generator=g, device="cuda")
    g.manual_seed(5)
    torch.rand(16, generator=g, device="cuda")
    assert torch.equal(torch.rand(16, generator=g, device="cuda"), after_replay)


def test_an_unregistered_generator_used_in_a_capture_is_refused(torch_cuda: str) -> None:
    g = torch.Generator(device="cuda")
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="Attempt to increase offset for a CUDA generator not in capture mode"):
        with torch.cuda.graph(graph):
            torch.rand(16, generator=g, device="cuda")


def test_a_new_seed_for_a_generator_inside_a_capture_is_refused_in_torchs_words(torch_cuda: str) -> None:
    g = torch.Generator(device="cuda")
    g.manual_seed(1)
    graph = torch.cuda.CUDAGraph()
    graph.register_generator_state(g)
    with pytest.raises(RuntimeError, match=SEED_IN_CAPTURE):
        with torch.cuda.graph(graph):
            torch.rand(16, generator=g, device="cuda")
            g.manual_seed(2)
