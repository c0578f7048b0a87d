"""A capture leaves the device generator's offset where it found it; each replay draws from there on.

CUDA's generator counts a capture's draws apart (``offset_intragraph``), so the eager offset is the
same before and after ``capture_end``; a replay then draws at the offset it finds and moves it on by
the graph's whole increment. So a graph of random ops captured right after a seed replays the very
draws eager code makes after that seed (PyTorch's ``test_graph_rng_functional``: eager dropouts
interleaved with replays match six eager dropouts).
"""

from __future__ import annotations

import torch


def _captured(body):  # type: ignore[no-untyped-def]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(side):
        g.capture_begin()
        out = body()
        g.capture_end()
    torch.cuda.current_stream().wait_stream(side)
    return g, out


def test_the_generator_state_after_a_capture_is_the_state_before_it(torch_cuda: str) -> None:
    torch.cuda.manual_seed(5)
    torch.rand(8, device="cuda")  # an eager draw: the offset is past zero
    before = torch.cuda.get_rng_state()
    _captured(lambda: torch.rand(1000, device="cuda") + torch.randn(1000, device="cuda"))
    assert torch.equal(torch.cuda.get_rng_state(), before)


def test_replays_after_a_seed_repeat_the_eager_draws_after_that_seed(torch_cuda: str) -> None:
    torch.cuda.manual_seed(5)
    first, second = torch.rand(64, device="cuda"), torch.rand(64, device="cuda")
    eager_after_two = torch.rand(64, device="cuda")

    torch.cuda.manual_seed(5)
    g, out = _captured(lambda: torch.rand(64, device="cuda"))
    g.replay()
    torch.testing.assert_close(out, first, rtol=0, atol=0)
    g.replay()
    torch.testing.assert_close(out, second, rtol=0, atol=0)
    torch.testing.assert_close(torch.rand(64, device="cuda"), eager_after_two, rtol=0, atol=0)
