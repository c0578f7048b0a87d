"""A matrix product's first use of cuBLAS on a stream takes a workspace from the caching allocator, as torch 2.11
does on the H200 (device probe of session 14, ``.probe/s14_probe3.py``): 32 MiB per thread and stream, in the
pool the stream allocates from (the graph's private pool while it captures), plus 1 MiB per stream for a
product through cuBLASLt (``linear`` with a bias); ``torch._C._cuda_clearCublasWorkspaces()`` frees them. The
emulator had none, so ``memory_allocated()`` after any matmul was 32 MiB short of the H200's and a default-pool
segment did not survive ``empty_cache()`` (PyTorch's ``test_cuda_graph_allocator_propagates_stream`` counts
on one). Both arms; every product runs on a stream of its own, so what earlier tests made does not count."""

from __future__ import annotations

import threading

import pytest
import torch

# The caching allocator's figures and words: on the cuda arm in a process of their own (conftest.py).
pytestmark = pytest.mark.own_process

WORKSPACE = 32 << 20
LT_WORKSPACE = 1 << 20
RESULT = 64 * 64 * 4


def blocks_on(stream: torch.cuda.Stream) -> list[int]:
    return sorted(b["size"] for seg in torch.cuda.memory_snapshot() if seg["stream"] == stream.cuda_stream
                  for b in seg["blocks"] if b["state"] == "active_allocated")


def allocated_by(product, stream: torch.cuda.Stream) -> int:
    """Bytes ``product()`` leaves allocated on ``stream``, its result included: the blocks of that stream alone
    (``memory_allocated()`` counts the whole process, where an earlier test's tensor may die meanwhile)."""
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        before = blocks_on(stream)
        result = product()
        torch.cuda.synchronize()
        after = blocks_on(stream)
    del result
    for size in before:
        after.remove(size)
    return sum(after)


def test_the_first_product_on_a_stream_takes_a_workspace_and_the_next_does_not(torch_cuda: str) -> None:
    x = torch.ones(64, 64, device="cuda")
    bias = torch.ones(64, device="cuda")
    s = torch.cuda.Stream()
    assert allocated_by(lambda: x @ x, s) == RESULT + WORKSPACE
    assert allocated_by(lambda: x @ x, s) == RESULT
    assert allocated_by(lambda: torch.nn.functional.linear(x, x, bias), s) == RESULT + LT_WORKSPACE  # cuBLASLt's
    assert allocated_by(lambda: torch.nn.functional.linear(x, x, bias), s) == RESULT
    assert allocated_by(lambda: torch.addmm(x, x, x), torch.cuda.Stream()) == RESULT + WORKSPACE  # 2-D bias: no Lt
    grown = []
    other = threading.Thread(target=lambda: grown.append(allocated_by(lambda: x @ x, s)))
    other.start()
    other.join()
    assert grown == [RESULT + WORKSPACE]  # another thread's handle: a workspace of its own on the same stream


def test_a_capturing_stream_takes_its_workspace_from_the_graphs_pool_and_clearing_frees_them(torch_cuda: str) -> None:
    x = torch.ones(64, 64, device="cuda")
    x @ x  # this thread's handle, outside any capture
    g = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        g.capture_begin()
        y = x @ x
        g.capture_end()
    pool = list(g.pool())
    in_pool = sorted(b["size"] for seg in torch.cuda.memory_snapshot() if list(seg["segment_pool_id"]) == pool
                     for b in seg["blocks"] if b["state"] == "active_allocated")
    assert in_pool == [RESULT, WORKSPACE]
    s = torch.cuda.Stream()
    bias = torch.ones(64, device="cuda")
    assert allocated_by(lambda: torch.nn.functional.linear(x, x, bias), s) == RESULT + WORKSPACE + LT_WORKSPACE
    torch._C._cuda_clearCublasWorkspaces()
    assert allocated_by(lambda: torch.nn.functional.linear(x, x, bias), s) == RESULT + WORKSPACE + LT_WORKSPACE
    del g, y
