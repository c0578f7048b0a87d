"""A capture runs no kernel on a GPU, so nothing checks the VALUES a captured operation reads until a replay.

An index that an earlier graph computes holds garbage until that graph replays; a second graph that gathers with it
captures fine on a GPU (PyTorch's ``test_graph_make_graphed_callables``: ``make_graphed_callables`` captures a
backward whose ``gather`` reads the index its forward's capture made, never computed). The emulator runs each
operation at capture to have its results, on what the memory holds then, where a CPU kernel's bounds check refused
the garbage ("index -24229 is out of bounds for dimension 0 with size 640").
"""

from __future__ import annotations

import torch

from tests.torch_cuda.side_capture import captured as _capture


def test_a_gather_with_an_index_only_an_earlier_graph_computes_captures_and_replays_right(torch_cuda: str) -> None:
    x = torch.randn(8, 4, device="cuda")
    first, second = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    idx = _capture(first, lambda: torch.arange(8, device="cuda").flip(0).view(-1, 1).repeat(1, 4))
    out = _capture(second, lambda: torch.gather(x, 0, idx) * 2, pool=first.pool())
    first.replay()
    second.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, x.flip(0) * 2)


def test_an_index_select_and_a_scatter_add_likewise(torch_cuda: str) -> None:
    x = torch.randn(6, 3, device="cuda")
    first, second = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    ids = _capture(first, lambda: (torch.arange(6, device="cuda") * 5) % 6)
    acc = torch.zeros(6, 3, device="cuda")

    def body() -> torch.Tensor:
        picked = torch.index_select(x, 0, ids)
        acc.scatter_add_(0, ids.view(-1, 1).expand(6, 3), picked)
        return picked

    picked = _capture(second, body, pool=first.pool())
    first.replay()
    second.replay()
    torch.cuda.synchronize()
    order = [(i * 5) % 6 for i in range(6)]
    assert torch.equal(picked, x[order])
    assert torch.allclose(acc, torch.zeros(6, 3, device="cuda").index_add_(0, torch.tensor(order, device="cuda"),
                                                                             x[order]))
