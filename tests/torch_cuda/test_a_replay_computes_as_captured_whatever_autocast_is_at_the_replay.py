"""A replay computes what was captured, whatever autocast is at the replay, as on a GPU.

A GPU's replay launches the captured kernels: a ``torch.autocast`` region around ``replay()`` changes
nothing (a graph captured in float32 replays in float32; one captured under autocast keeps its casts).
The emulated replay re-issues the recorded operations through torch's dispatcher, where the emulated
device's autocast (CPU autocast with CUDA's lists) casts again: a float32 ``addmm`` captured outside
autocast and replayed in its functional form inside an autocast region ran in float16, and the captured
output got float16's values. Seen through ``make_graphed_callables`` under autocast (PyTorch's
``test_graph_make_graphed_callables_with_amp_*``): a graphed model's parameters parted from an eager twin's
after ten steps, in some runs and not others, as the capture's timing chose each operation's replay form.

At capture the emulator picks the faster of an operation's two replay forms (``seam.emulator._cost``); on
the emulated arm each case pins one form, so both are exercised whatever this machine times.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from seam import emulator


@pytest.fixture(params=["out", "functional"])
def replay_form(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every operation captured replays in this form (on the emulated arm; the GPU replays kernels)."""
    form = request.param

    def pinned(op: Any, *args: Any, **kwargs: Any) -> int:
        return 0 if op.mutating == (form == "out") else 1  # the pinned form is "faster"

    monkeypatch.setattr(emulator, "_cost", pinned)
    monkeypatch.setattr(emulator, "_FASTER", {})
    return form


def _captured(body: Any) -> tuple[torch.cuda.CUDAGraph, Any]:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        body()  # warm-up, as CUDA-graph code does before a capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = body()
    return graph, out


def test_a_float32_linear_captured_outside_autocast_replays_in_float32_inside_it(torch_cuda: str,
                                                                                 replay_form: str) -> None:
    torch.manual_seed(0)
    linear = torch.nn.Linear(64, 32).cuda()
    x = torch.randn(16, 64, device="cuda")
    with torch.no_grad():
        eager = linear(x)
        graph, out = _captured(lambda: linear(x))
    out.zero_()
    with torch.autocast("cuda", dtype=torch.float16):
        graph.replay()
        torch.cuda.synchronize()  # the replay runs by here
    assert out.dtype == torch.float32
    assert torch.equal(out, eager)  # float16's product rounds the last bits away: 0.02 apart here


def test_a_float32_matrix_product_and_batched_product_replay_in_float32_inside_autocast(torch_cuda: str,
                                                                                        replay_form: str) -> None:
    torch.manual_seed(1)
    a, b = torch.randn(24, 40, device="cuda"), torch.randn(40, 8, device="cuda")
    p, q = torch.randn(3, 24, 40, device="cuda"), torch.randn(3, 40, 8, device="cuda")
    eager = (a @ b, torch.bmm(p, q))
    graph, (mm, bmm) = _captured(lambda: (a @ b, torch.bmm(p, q)))
    mm.zero_()
    bmm.zero_()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        graph.replay()
        torch.cuda.synchronize()
    assert torch.equal(mm, eager[0]) and torch.equal(bmm, eager[1])


def test_a_graph_captured_under_autocast_keeps_its_casts_when_replayed_outside_it(torch_cuda: str,
                                                                                  replay_form: str) -> None:
    torch.manual_seed(2)
    linear = torch.nn.Linear(64, 32).cuda()
    x = torch.randn(16, 64, device="cuda")
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
        eager = linear(x)
        graph, out = _captured(lambda: linear(x))
    out.zero_()
    graph.replay()  # outside autocast
    torch.cuda.synchronize()
    assert out.dtype == torch.float16
    assert torch.equal(out, eager)
