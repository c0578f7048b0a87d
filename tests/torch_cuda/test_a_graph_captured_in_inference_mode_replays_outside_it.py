"""A graph captured under ``torch.inference_mode()`` replays outside it, as on a GPU.

A GPU's replay launches kernels, which neither autograd nor inference mode sees. The emulated replay re-issues the
recorded operations, and torch refuses an in-place update of an inference tensor outside inference mode ("Inplace
update to inference tensor outside InferenceMode is not allowed"): a capture made under ``inference_mode`` (engines
capture so) failed at its first replay outside it, or at the end of ``emulate_cuda()`` where a replay still in flight
ran. The replay runs in inference mode now (``seam/emulator.py``, ``EmulatedGraph.steps``).
"""

from __future__ import annotations

import torch


def test_a_graph_captured_in_inference_mode_writes_its_buffers_at_a_replay_outside_it(torch_cuda: str) -> None:
    graph = torch.cuda.CUDAGraph()
    with torch.inference_mode():
        static, source = torch.zeros(4, device="cuda"), torch.ones(4, device="cuda")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            static.copy_(source)
        torch.cuda.current_stream().wait_stream(side)
        with torch.cuda.graph(graph):
            static.copy_(source)
            out = static * 2
    assert static.is_inference() and out.is_inference()
    for value in (3.0, -1.0):
        with torch.inference_mode():
            source.fill_(value)
        graph.replay()  # outside inference mode
        torch.cuda.synchronize()
        assert out.cpu().tolist() == [value * 2] * 4
    graph.replay()  # left in flight: run as the emulation ends, outside inference mode too


def test_concurrent_replays_leave_the_callers_grad_and_inference_modes_as_they_were(torch_cuda: str) -> None:
    """Two replays that run at once (the emulator interleaves their operations) leave no mode behind: each replay
    enters inference mode, and interleaved they leave it in another order than they entered it."""
    side = torch.cuda.Stream()
    a = torch.ones(8, device="cuda")
    graphs = [torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()]
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        outs = []
        for graph, value in zip(graphs, (1.0, 2.0)):
            with torch.cuda.graph(graph, stream=side):
                outs.append((a + value) * 2 + 1)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    s0, s1 = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(s0):
        torch.cuda._sleep(1_000_000)
        s1.wait_stream(s0)
        graphs[0].replay()
    with torch.cuda.stream(s1):
        graphs[1].replay()
    torch.cuda.synchronize()
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
    assert [o.cpu().tolist() for o in outs] == [[5.0] * 8, [7.0] * 8]
    assert torch.ones(2, device="cuda").requires_grad_().sum().requires_grad  # autograd records as before
