"""What graphs hold in the caching allocator, as the H200 gives it (torch 2.11, device probe of session 14,
``.probe/s14_probe2.py``), found by PyTorch's own graph tests on the emulated device:

- a generator state's seed and offset holders (two blocks of 512 bytes) are made when the FIRST graph registers
  with the state and freed when the LAST one is reset or dies: one pair a state, however many graphs
  (``test_memory_stats_of_multiple_generators_and_graphs``; the emulator had made a pair a capture);
- a graph holds no memory: a tensor that only a graph reads (an earlier graph's output, read by a later graph's
  capture) is freed when its last tensor dies, and a dropped graph's inputs are freed at once, not when the
  collector next runs (``test_graph_two_successive``; the emulator had kept both blocks active), and so is a
  DEFAULT-pool tensor deleted while a live graph still reads it (session 15: it had stayed active until the graph
  went).
Both arms; the figures are differences, so what earlier tests left on the device does not count."""

from __future__ import annotations

import gc

import pytest
import torch

# The caching allocator's figures and words: on the cuda arm in a process of their own (conftest.py).
pytestmark = pytest.mark.own_process

K = ("active.all.current", "active_bytes.all.current")


def held() -> list[int]:
    stats = torch.cuda.memory_stats()
    return [stats[k] for k in K]


def delta(base: list[int]) -> list[int]:
    return [now - then for now, then in zip(held(), base)]


def capture_a_draw(graph: torch.cuda.CUDAGraph) -> None:
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        graph.capture_begin()
        torch.rand(1, device="cuda")
        graph.capture_end()
    torch.cuda.current_stream().wait_stream(side)
    graph.replay()


def test_a_generator_states_holders_are_one_pair_however_many_graphs_register(torch_cuda: str) -> None:
    gc.collect()
    base = held()
    graphs = [torch.cuda.CUDAGraph() for _ in range(3)]
    seen = []
    for graph in graphs:
        capture_a_draw(graph)
        seen.append(delta(base))
    del graph
    assert seen == [[2, 1024]] * 3  # the default generator's pair, made by the first capture only
    del graphs[0]
    graphs[0].reset()
    assert delta(base) == [2, 1024]  # one graph still registered
    del graphs
    gc.collect()
    assert delta(base) == [0, 0]  # the last one gone: the pair freed


def test_a_second_states_holders_come_at_its_registration_and_go_with_the_graph(torch_cuda: str) -> None:
    gc.collect()
    base = held()
    state = torch.cuda.default_generators[0].clone_state()
    graph = torch.cuda.CUDAGraph()
    graph.register_generator_state(state)
    assert delta(base) == [2, 1024]  # the new state's pair, made when it is registered
    capture_a_draw(graph)
    assert delta(base) == [4, 2048]  # and the default generator's, at capture_begin
    del graph
    gc.collect()
    assert delta(base) == [0, 0]


def test_a_block_only_graphs_read_is_freed_when_its_last_tensor_dies(torch_cuda: str) -> None:
    def step(t: torch.Tensor) -> torch.Tensor:
        return t.clone() + 1

    side = torch.cuda.Stream()
    a = torch.ones(1000, device="cuda")
    gc.collect()
    g0, g1 = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        g0.capture_begin()
        b = step(a)
        g0.capture_end()
        base = held()  # b (g0's output) is live
        g1.capture_begin()
        b = step(b)  # g0's output now only g1's capture reads: its block is free, as on a GPU
        g1.capture_end()
    torch.cuda.current_stream().wait_stream(side)
    assert delta(base) == [0, 0]  # g1's output in, g0's output out (the holders were made by g0)
    a_bytes = -(-a.untyped_storage().nbytes() // 512) * 512  # its block: the request rounded up to 512 bytes
    base = held()
    del a, g0  # a's last tensor and the only graph that reads it: freed now, not at the next collection
    assert delta(base) == [-1, -a_bytes]
    # (A replay of g1 now reads g0's output block, freed and never written: undefined on a GPU, NaN here.)


def test_a_default_pool_tensor_deleted_while_a_live_graph_reads_it_is_freed(torch_cuda: str) -> None:
    side = torch.cuda.Stream()
    a = torch.ones(1000, device="cuda")  # allocated outside any capture: the default pool
    a_bytes = -(-a.untyped_storage().nbytes() // 512) * 512
    graph = torch.cuda.CUDAGraph()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        graph.capture_begin()
        b = a * 2
        graph.capture_end()
    torch.cuda.current_stream().wait_stream(side)
    gc.collect()
    base = held()
    del a  # the graph still reads it, and stays alive: on a GPU the block is freed all the same
    assert delta(base) == [-1, -a_bytes]
    assert b.shape == (1000,) and graph.pool() is not None
