"""``torch.accelerator`` (what device-generic engine code writes) routes to the CUDA device, as on a CUDA build: its
memory figures are ``torch.cuda``'s, its checks and refusals are the H200's (torch 2.11,
``evidence/h200-accelerator-probe-ebdeafa.json``), ``device_index`` selects the device, a ``torch.Stream`` is a
context manager, and ``torch.accelerator.Graph`` (torch >= 2.12; the H200's torch 2.11 has none, so those cases
run on the emulated arm only) captures and replays. Before, under emulation each call here raised "Cannot access
accelerator device when none is available"."""

from __future__ import annotations

import pytest
import torch

from seam.cuda_backend import end_generator_capture

# The caching allocator's figures and words: on the cuda arm in a process of their own (conftest.py).
pytestmark = pytest.mark.own_process

needs_graph = pytest.mark.skipif(not hasattr(torch.accelerator, "Graph"),
                                 reason=f"torch {torch.__version__} has no torch.accelerator.Graph (torch >= 2.12)")


def test_the_memory_figures_are_torch_cudas_key_for_key(torch_cuda: str) -> None:
    x = torch.ones(1000, device="cuda")
    assert torch.accelerator.memory_stats() == torch.cuda.memory_stats()
    assert torch.accelerator.memory_stats("cuda:0") == torch.accelerator.memory_stats(0)
    assert torch.accelerator.memory_allocated() == torch.cuda.memory_allocated() >= x.nbytes
    assert torch.accelerator.memory_reserved() == torch.cuda.memory_reserved()
    assert torch.accelerator.max_memory_allocated() == torch.cuda.max_memory_allocated()
    assert torch.accelerator.max_memory_reserved() == torch.cuda.max_memory_reserved()
    (free, total), (cuda_free, cuda_total) = torch.accelerator.get_memory_info(), torch.cuda.mem_get_info()
    assert total == cuda_total and 0 < free <= total and 0 < cuda_free <= total
    if torch_cuda == "cpu-emulated":  # on a GPU the free bytes are the device's: other processes move them between calls
        assert free == cuda_free


def test_resetting_the_peak_and_emptying_the_cache_act_on_torch_cudas_figures(torch_cuda: str) -> None:
    torch.cuda.empty_cache()
    before = torch.cuda.memory_reserved()
    block = torch.empty(96 << 20, dtype=torch.uint8, device="cuda")
    assert torch.accelerator.memory_reserved() - before >= 96 << 20
    del block
    torch.accelerator.reset_peak_memory_stats()
    assert torch.accelerator.max_memory_allocated() == torch.cuda.memory_allocated()
    torch.accelerator.reset_accumulated_memory_stats()
    assert torch.cuda.memory_stats()["allocation.all.freed"] == 0
    torch.accelerator.empty_cache()
    assert torch.cuda.memory_reserved() == before  # the freed 96 MiB segment went back


def test_another_device_is_refused_in_the_allocators_words_and_the_host_by_torch(torch_cuda: str) -> None:
    with pytest.raises(RuntimeError, match="Invalid device argument .*: did you call init?"):
        torch.accelerator.memory_stats(7)
    with pytest.raises(ValueError, match="cpu doesn't match the current accelerator cuda"):
        torch.accelerator.memory_stats("cpu")
    with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"):
        torch.accelerator.synchronize(5)


def test_the_device_capability_query_is_refused_as_the_h200_refuses_it(torch_cuda: str) -> None:
    with pytest.raises(RuntimeError, match="Backend doesn't support getting device capabilities"):
        torch.accelerator.get_device_capability()


def test_device_index_selects_the_device_for_its_block(torch_cuda: str) -> None:
    with torch.accelerator.device_index(0):
        assert torch.accelerator.current_device_index() == 0
    with torch.accelerator.device_index(None):
        assert torch.accelerator.current_device_index() == 0


def test_a_stream_is_current_inside_its_own_with_block(torch_cuda: str) -> None:
    s = torch.cuda.Stream()
    before = torch.cuda.current_stream()
    with s as entered:
        assert entered is s and torch.cuda.current_stream() == s
        with torch.cuda.Stream() as inner:
            assert torch.cuda.current_stream() == inner
        assert torch.cuda.current_stream() == s
    assert torch.cuda.current_stream() == before


@needs_graph
def test_a_graph_captured_on_the_current_stream_recomputes_into_its_memory(torch_cuda: str) -> None:
    x = torch.zeros(4, device="cuda")
    s, g = torch.Stream(device="cuda"), torch.accelerator.Graph()
    s.wait_stream(torch.cuda.current_stream())
    with s, g:
        x += 1
    assert isinstance(g, torch.accelerator.Graph)
    assert x.tolist() == [0.0] * 4  # a capture records; it runs nothing
    g.replay()
    g.replay()
    torch.accelerator.synchronize()
    assert x.tolist() == [2.0] * 4


@needs_graph
def test_a_graph_takes_its_pool_and_capture_mode_when_made(torch_cuda: str) -> None:
    s = torch.Stream(device="cuda")
    x = torch.ones(4, device="cuda")
    first = torch.accelerator.Graph(capture_error_mode="relaxed")
    with s, first:
        y = x * 2
    second = torch.accelerator.Graph(keep_graph=True, pool=first.pool())
    with s, second:
        z = y + 1
    assert second.pool() == first.pool()
    second.instantiate()
    first.replay()
    second.replay()
    assert z.tolist() == [3.0] * 4


@needs_graph
def test_a_graph_refuses_the_default_stream_and_an_unknown_mode(torch_cuda: str) -> None:
    try:
        with pytest.raises(RuntimeError, match="CUDA graphs must be captured on a non-default stream"):
            with torch.accelerator.Graph():
                pass
    finally:  # refused after the generator's prologue, as torch 2.11's CUDAGraph does: end its capture
        end_generator_capture("cuda")
    with pytest.raises(RuntimeError, match="Unknown capture error mode. Expected `default`, `global`, "
                                           "`thread_local`, or `relaxed`, got strict"):
        with torch.Stream(device="cuda"), torch.accelerator.Graph(capture_error_mode="strict"):
            pass
