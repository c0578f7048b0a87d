"""A generator made on "cuda" is a ``torch.Generator`` on ``cuda:0``: the random operations given it
draw from it alone, re-seeding it repeats them, its state round-trips, and
``torch.cuda.default_generators[0]`` is the generator ``torch.cuda.manual_seed`` seeds. Run on both
arms (the ``torch_cuda`` fixture): the emulator must say what a GPU says."""

from __future__ import annotations

from typing import Callable

import pytest
import torch

#: name -> a random device operation drawing from generator ``g`` (each returns a fresh tensor).
DRAWS: dict[str, Callable[[torch.Generator], torch.Tensor]] = {
    "randn": lambda g: torch.randn(64, generator=g, device="cuda"),
    "rand": lambda g: torch.rand(64, generator=g, device="cuda"),
    "normal_": lambda g: torch.empty(64, device="cuda").normal_(generator=g),
    "bernoulli_": lambda g: torch.empty(64, device="cuda").bernoulli_(0.5, generator=g),
    "randint": lambda g: torch.randint(0, 1000, (64,), generator=g, device="cuda"),
    "randperm": lambda g: torch.randperm(64, generator=g, device="cuda"),
    "multinomial": lambda g: torch.multinomial(torch.ones(64, device="cuda"), 8, generator=g),
}


def test_a_generator_made_on_cuda_reports_cuda_0_and_is_a_torch_generator(torch_cuda: str) -> None:
    g = torch.Generator(device="cuda")
    assert g.device == torch.device("cuda")  # no index, as given (the H200 at 84b227e: device(type='cuda'))
    assert torch.cuda.default_generators[0].device == torch.device("cuda", 0)
    assert isinstance(g, torch.Generator)
    assert isinstance(torch.Generator(), torch.Generator)  # a CPU one, made the same way
    assert isinstance(torch.default_generator, torch.Generator)
    assert torch.Generator().device == torch.device("cpu")
    for spelled in (torch.device("cuda", 0), "cuda:0", 0):  # a bare ordinal is the accelerator's
        assert torch.Generator(device=spelled).device == torch.device("cuda", 0)


@pytest.mark.parametrize("draw", sorted(DRAWS))
def test_each_random_operation_repeats_its_draw_after_the_same_seed(torch_cuda: str, draw: str) -> None:
    g = torch.Generator(device="cuda")
    g.manual_seed(1234)
    first = DRAWS[draw](g)
    assert first.device == torch.device("cuda", 0)
    g.manual_seed(1234)
    assert torch.equal(DRAWS[draw](g), first)


def test_consecutive_draws_differ_and_the_seed_is_reported(torch_cuda: str) -> None:
    g = torch.Generator(device="cuda")
    g.manual_seed(7)
    assert g.initial_seed() == 7
    a, b = torch.randn(64, generator=g, device="cuda"), torch.randn(64, generator=g, device="cuda")
    assert not torch.equal(a, b)


def test_drawing_from_a_generator_of_ones_own_leaves_the_default_one_alone(torch_cuda: str) -> None:
    torch.cuda.manual_seed(5)
    control = torch.rand(16, device="cuda")
    g = torch.Generator(device="cuda")
    torch.cuda.manual_seed(5)
    torch.rand(16, generator=g, device="cuda")
    assert torch.equal(torch.rand(16, device="cuda"), control)


def test_a_generators_state_round_trips_and_is_cudas_sixteen_bytes(torch_cuda: str) -> None:
    g = torch.Generator(device="cuda")
    g.manual_seed(99)
    state = g.get_state()
    assert (state.dtype, state.numel(), state.device) == (torch.uint8, 16, torch.device("cpu"))
    a = torch.rand(8, generator=g, device="cuda")
    g.set_state(state)
    assert torch.equal(torch.rand(8, generator=g, device="cuda"), a)


def test_default_generators_hold_the_generator_that_torch_cuda_manual_seed_seeds(torch_cuda: str) -> None:
    torch.cuda.init()  # a GPU build fills default_generators when CUDA starts
    assert len(torch.cuda.default_generators) == torch.cuda.device_count()
    default = torch.cuda.default_generators[0]
    assert default.device == torch.device("cuda", 0)
    torch.cuda.manual_seed(321)
    assert default.initial_seed() == 321
    assert torch.equal(default.get_state(), torch.cuda.get_rng_state())
    a = torch.rand(8, device="cuda")
    torch.cuda.manual_seed(321)
    assert torch.equal(torch.rand(8, generator=default, device="cuda"), a)


def test_graphsafe_get_state_shares_the_state_and_clone_state_copies_it(torch_cuda: str) -> None:
    g = torch.Generator(device="cuda")
    g.manual_seed(11)
    copy = g.clone_state()
    shared = g.graphsafe_get_state()
    before = g.get_state()
    torch.rand(8, generator=copy, device="cuda")
    assert torch.equal(g.get_state(), before)  # the copy moved on alone
    torch.rand(8, generator=shared, device="cuda")
    assert not torch.equal(g.get_state(), before)  # the shared state moved g on too
    other = torch.Generator(device="cuda")
    other.graphsafe_set_state(g)
    assert torch.equal(other.get_state(), g.get_state())


def test_a_generator_of_the_wrong_device_is_refused_in_torchs_words(torch_cuda: str) -> None:
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        torch.randn(4, generator=torch.Generator(), device="cuda")
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        torch.randn(4, generator=torch.Generator(device="cuda"))
