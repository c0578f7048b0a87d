"""Two graph replays launched back to back on streams that nothing orders run concurrently on a GPU: when the
graphs share a memory pool, each overwrites the intermediates of the other and both results come out wrong;
with pools of their own both come out right, and so do replays one stream orders (PyTorch's
``test_graph_concurrent_replay`` passes on the H200, device call of session 14's probe; the emulator ran every
replay at once, so the shared pools' results came out right there). Both arms; ``seam/torch_cuda/in_flight.py``."""

from __future__ import annotations

import pytest
import torch

SIZE = 1_000_000  # large, so the GPU's kernels of the two replays overlap


def twice_plus(t: torch.Tensor, val: float) -> torch.Tensor:
    x = t.clone() + val
    y = t.clone() + val
    return x + y


def captured_pair(share: str) -> tuple[torch.cuda.CUDAGraph, torch.cuda.CUDAGraph, torch.Tensor, torch.Tensor]:
    """g0 computes b from ones, g1 computes c from ones, each through five steps of temporaries."""
    side = torch.cuda.Stream()
    a = torch.ones(SIZE, device="cuda")
    g0, g1 = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        first = (torch.cuda.graph_pool_handle(),) if share == "handle" else ()
        g0.capture_begin(*first)
        b = a.clone()
        for _ in range(5):
            b = twice_plus(b, 1)
        g0.capture_end()
        g1.capture_begin(*((g0.pool(),) if share == "pool" else first))
        c = a.clone()
        for _ in range(5):
            c = twice_plus(c, 2)
        g1.capture_end()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    return g0, g1, b, c


def replay_concurrently(g0: torch.cuda.CUDAGraph, g1: torch.cuda.CUDAGraph) -> None:
    s0, s1 = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(s0):
        torch.cuda._sleep(1_000_000)  # s0 busy, so that g0 and g1 start together on the device
        s1.wait_stream(s0)
        g0.replay()
    with torch.cuda.stream(s1):
        g1.replay()
    torch.cuda.current_stream().wait_stream(s0)
    torch.cuda.current_stream().wait_stream(s1)


@pytest.mark.parametrize("share", ["pool", "handle"])
def test_concurrent_replays_sharing_a_pool_corrupt_both_results(torch_cuda: str, share: str) -> None:
    g0, g1, b, c = captured_pair(share)
    replay_concurrently(g0, g1)
    assert b.sum().item() != SIZE * 94
    assert c.sum().item() != SIZE * 156


def test_concurrent_replays_of_separate_pools_are_both_right(torch_cuda: str) -> None:
    g0, g1, b, c = captured_pair("no")
    replay_concurrently(g0, g1)
    assert [b.sum().item(), c.sum().item()] == [SIZE * 94, SIZE * 156]


@pytest.mark.parametrize("order", ["one stream", "a wait between"])
def test_replays_sharing_a_pool_that_a_stream_orders_are_both_right(torch_cuda: str, order: str) -> None:
    g0, g1, b, c = captured_pair("pool")
    s0, s1 = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(s0):
        g0.replay()
    if order == "a wait between":
        s1.wait_stream(s0)
    with torch.cuda.stream(s0 if order == "one stream" else s1):
        g1.replay()
    torch.cuda.current_stream().wait_stream(s0)
    torch.cuda.current_stream().wait_stream(s1)
    assert [b.sum().item(), c.sum().item()] == [SIZE * 94, SIZE * 156]


def test_a_replay_in_flight_has_run_before_anything_reads_the_device(torch_cuda: str) -> None:
    g0, g1, b, c = captured_pair("no")
    b.zero_()
    c.zero_()
    g0.replay()
    torch.cuda.memory_allocated()  # a figure read
    assert b.sum().item() == SIZE * 94
    with torch.cuda.stream(torch.cuda.Stream()):
        g1.replay()
    g1.reset()  # the graph goes while its replay is in flight: the launched work still runs
    torch.cuda.synchronize()
    assert c.sum().item() == SIZE * 156


# tolist, repr and save are red without their settle (tensor_methods, serialization); deepcopy passed without its
# own: torch's deepcopy runs a tensor operation (settling) before the storage's clone, so that case guards the read,
# not the settle in tensor_methods.deepcopy.
@pytest.mark.parametrize("read", ["tolist", "repr", "deepcopy", "save"])
def test_reads_without_a_tensor_operation_see_the_replay(torch_cuda: str, read: str, tmp_path) -> None:
    import copy

    g0, g1, b, c = captured_pair("no")
    head = b[:3]
    b.zero_()
    g0.replay()
    if read == "tolist":
        seen = head.tolist()
    elif read == "repr":
        seen = [float(v) for v in repr(head).split("[")[1].split("]")[0].split(",")]
    elif read == "deepcopy":
        seen = copy.deepcopy(head).tolist()
    else:
        torch.save(head, tmp_path / "head.pt")
        seen = torch.load(tmp_path / "head.pt").tolist()
    assert seen == [94.0, 94.0, 94.0]
