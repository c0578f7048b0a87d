"""The emulated device reports the caching allocator's figures and the generator's Philox offsets as the
H200 does (torch 2.11), in what does not depend on what earlier tests of the process left allocated: a
capture's private pool beside two 8-byte holders on its stream, and the offset moving by what each kernel
draws. The figures that do (rounding, segments, splitting, merging, ``empty_cache``: a default pool
already holding other tests' blocks serves requests from their segments, H200 at 17ba423) are checked in
fresh interpreters on both arms by the corpus' class ``allocator`` (``tests/fidelity/test_cuda_table.py``)."""

from __future__ import annotations

import gc

import pytest
import torch

# The caching allocator's figures and words: on the cuda arm in a process of their own (conftest.py).
pytestmark = pytest.mark.own_process

MiB = 1 << 20


def _figures(*names: str) -> list[int]:
    stats = torch.cuda.memory_stats()
    return [stats[name] for name in names]


def test_a_capture_serves_its_blocks_from_a_private_pool_beside_two_rng_holders(torch_cuda: str) -> None:
    names = ("segment.all.current", "reserved_bytes.all.current", "active.all.current", "active_bytes.all.current")
    s = torch.cuda.Stream()
    gc.collect()
    torch.cuda.empty_cache()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        a = torch.ones(128, device="cuda")
        pre = _figures(*names)
        g = torch.cuda.CUDAGraph()
        g.capture_begin()
        b = a.clone()
        for _ in range(5):
            b = b.clone() + 1
        g.capture_end()
    torch.cuda.current_stream().wait_stream(s)
    gc.collect()
    assert [x - y for x, y in zip(_figures(*names), pre)] == [1, 2 * MiB, 3, 512 + 2 * 512]
    del g
    gc.collect()
    torch.cuda.empty_cache()
    assert [x - y for x, y in zip(_figures(*names), pre)] == [1, 2 * MiB, 1, 512]
    del a, b


def test_the_philox_offset_moves_by_what_each_kernel_draws(torch_cuda: str) -> None:
    gen = torch.cuda.default_generators[0]
    steps = []
    for make in (lambda: torch.rand(1000, device="cuda"), lambda: torch.randn(4 << 20, device="cuda"),
                 lambda: torch.rand(4 << 20, device="cuda", dtype=torch.float64),
                 lambda: torch.bernoulli(torch.full((1000,), 0.5, device="cuda")),
                 lambda: torch.nn.functional.dropout(torch.ones(4 << 20, device="cuda"), 0.5)):
        before = gen.get_offset()
        make()
        steps.append(gen.get_offset() - before)
    assert steps == [4, 16, 32, 12, 16]
