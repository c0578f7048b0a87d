"""The emulated device reports the caching allocator's figures and the generator's Philox offsets as the
H200 does (torch 2.11; the figures are the H200's record of ``tests/fidelity/cuda_corpus.py``'s class
``allocator``): blocks rounded to 512 bytes, 2 MiB small and 20 MiB large segments, splitting and merging,
``empty_cache`` releasing wholly free segments only, a capture's private pool beside two 8-byte holders,
and the offset moving by what each kernel draws."""

from __future__ import annotations

import gc

import torch

MiB = 1 << 20


def _figures(*names: str) -> list[int]:
    stats = torch.cuda.memory_stats()
    return [stats[name] for name in names]


def test_a_request_is_rounded_to_512_bytes_in_a_2_mib_small_segment(torch_cuda: str) -> None:
    gc.collect()
    torch.cuda.empty_cache()
    before = _figures("allocated_bytes.all.current", "requested_bytes.all.current", "reserved_bytes.all.current")
    t = torch.empty(129, device="cuda")  # 516 bytes
    after = _figures("allocated_bytes.all.current", "requested_bytes.all.current", "reserved_bytes.all.current")
    assert [a - b for a, b in zip(after, before)] == [1024, 516, 2 * MiB]
    del t


def test_pools_segments_splits_and_merges_follow_cudas_rules(torch_cuda: str) -> None:
    gc.collect()
    torch.cuda.empty_cache()
    names = ("segment.small_pool.current", "segment.large_pool.current", "reserved_bytes.large_pool.current",
             "allocated_bytes.large_pool.current", "inactive_split.all.current")
    base = _figures(*names)
    keep = [torch.empty(n, dtype=torch.uint8, device="cuda") for n in (4, MiB + 512, 9 * MiB, 12 * MiB, 11 * MiB + 4)]
    grown = [a - b for a, b in zip(_figures(*names), base)]
    # a 1 MiB+512 request takes a 20 MiB segment and splits it, 9 MiB fits the rest, 12 MiB takes a
    # segment of its own, 11 MiB+4 one of 12 MiB whose 1 MiB-less rest is too small to split off.
    assert grown == [1, 3, 20 * MiB + 24 * MiB, (MiB + 512) + 9 * MiB + 12 * MiB + 12 * MiB, 2]
    del keep
    torch.cuda.empty_cache()
    assert _figures(*names) == base


def test_freed_neighbours_merge_and_only_wholly_free_segments_are_released(torch_cuda: str) -> None:
    gc.collect()
    torch.cuda.empty_cache()
    names = ("segment.all.current", "inactive_split.all.current", "inactive_split_bytes.all.current")
    base = _figures(*names)
    a, b, c = (torch.empty(1 << 16, device="cuda") for _ in range(3))  # 256 KiB each, one segment
    del a, b
    assert [x - y for x, y in zip(_figures(*names), base)] == [1, 2, 2 * MiB - 256 * 1024]
    torch.cuda.empty_cache()  # c still lives in the segment: nothing is released
    assert _figures(*names)[0] - base[0] == 1
    del c
    torch.cuda.empty_cache()
    assert _figures(*names) == base


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
    g2 = torch.cuda.CUDAGraph()  # the segment b lives in stays in the freed graph's pool until b dies
    del a, b, g2


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
