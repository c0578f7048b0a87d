"""``torch.cuda.set_per_process_memory_fraction(f)`` bounds what the caching allocator RESERVES to ``f`` of the
device: a new segment past it is refused with ``torch.OutOfMemoryError`` ("... 1.40 GiB allowed; ..." on the
H200, torch 2.11), after the allocator released its wholly free cached segments and tried once more (not
inside a capture); blocks it already holds are still handed out. Found on the H200 (``.probe`` of session 13):
the emulator had kept the fraction without bounding anything. Both arms."""

from __future__ import annotations

import re

import pytest
import torch

# The caching allocator's figures and words: on the cuda arm in a process of their own (conftest.py).
pytestmark = pytest.mark.own_process

FRACTION = 0.01


def words(error: BaseException) -> str:
    """The message's first line with its sizes left out (the H200 and the emulated device differ in size), and
    without the other processes torch names on a shared GPU ("Process 4980 has 1.2 GiB memory in use.": the
    H200 while the gates ran beside this suite; an emulated device is never shared)."""
    line = re.sub(r"\d+(\.\d+)? (GiB|MiB|KiB|bytes)", "N", str(error).splitlines()[0])
    return re.sub(r"Process \d+ has N memory in use\. ", "", line)


@pytest.fixture
def bounded(torch_cuda: str):
    torch.cuda.empty_cache()
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(FRACTION)
    try:
        yield total
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
        torch.cuda.empty_cache()


def device_bytes(n: int) -> torch.Tensor:
    return torch.empty(int(n), dtype=torch.uint8, device="cuda")


def test_an_allocation_past_the_fraction_is_cudas_out_of_memory_naming_what_is_allowed(bounded: int) -> None:
    assert device_bytes(1000).numel() == 1000  # a small block: well within
    with pytest.raises(torch.OutOfMemoryError) as refused:
        device_bytes(2 * FRACTION * bounded)
    assert words(refused.value) == (
        "CUDA out of memory. Tried to allocate N. GPU 0 has a total capacity of N of which N is free. Including "
        "non-PyTorch memory, this process has N memory in use. N allowed; Of the allocated memory N is allocated by "
        "PyTorch, and N is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
        "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
        "Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)")
    value, unit = re.search(r"([\d.]+) (GiB|MiB) allowed", str(refused.value)).groups()
    scale = 2**30 if unit == "GiB" else 2**20
    assert abs(float(value) * scale - FRACTION * bounded) <= 0.005 * scale  # the fraction of the device, to 2 places
    assert device_bytes(FRACTION * bounded / 2).numel() > 0  # the device works on


def test_what_is_reserved_counts_not_what_is_allocated_and_cached_segments_go_first(bounded: int) -> None:
    quarter = 0.4 * FRACTION * bounded
    held = [device_bytes(quarter), device_bytes(quarter)]
    with pytest.raises(torch.OutOfMemoryError, match=r"allowed; "):
        device_bytes(quarter)  # a third segment would pass the fraction
    retries = torch.cuda.memory_stats()["num_alloc_retries"]
    ooms = torch.cuda.memory_stats()["num_ooms"]
    del held  # their segments stay reserved (cached) ...
    assert torch.cuda.memory_reserved() >= 2 * quarter
    big = device_bytes(0.9 * FRACTION * bounded)  # ... until a segment past the fraction needs their room
    assert torch.cuda.memory_reserved() <= FRACTION * bounded
    assert torch.cuda.memory_stats()["num_alloc_retries"] == retries + 1 and torch.cuda.memory_stats()["num_ooms"] == ooms
    del big


def test_inside_a_capture_the_refusal_leaves_the_graph_context(bounded: int) -> None:
    with pytest.raises(torch.OutOfMemoryError, match=r"allowed; "):
        with torch.cuda.graph(torch.cuda.CUDAGraph()):
            device_bytes(2 * FRACTION * bounded)
    assert not torch.cuda.is_current_stream_capturing()
    assert torch.ones(2, device="cuda").sum().item() == 2.0


def test_a_fraction_set_after_an_allocation_refuses_the_next_segment_not_the_earlier_one(torch_cuda: str) -> None:
    """What was allocated before the fraction was set stays allocated, and counts as reserved: the NEXT new
    segment is refused, naming its own size. (The emulated allocator defers its book-keeping: it once played the
    earlier allocation under the new limit, refused it instead and lost the rest of that batch.)"""
    torch.cuda.empty_cache()
    total = torch.cuda.get_device_properties(0).total_memory
    before = torch.cuda.memory_allocated()
    earlier = device_bytes(2 * FRACTION * total)
    torch.cuda.set_per_process_memory_fraction(FRACTION)
    try:
        with pytest.raises(torch.OutOfMemoryError, match=r"allowed; ") as refused:
            device_bytes(FRACTION * total / 2)  # alone within the fraction; with `earlier` reserved, past it
        value, unit = re.search(r"Tried to allocate ([\d.]+) (GiB|MiB)", str(refused.value)).groups()
        asked = float(value) * (2**30 if unit == "GiB" else 2**20)
        assert abs(asked - FRACTION * total / 2) <= 0.01 * 2**30, str(refused.value).splitlines()[0]
        assert torch.cuda.memory_allocated() - before >= earlier.numel()
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
        del earlier
        torch.cuda.empty_cache()


def test_an_operations_result_past_the_fraction_is_refused_as_a_factorys_is(bounded: int) -> None:
    """A device operation's new result (not a factory's) that needs a segment past the fraction: the same
    refusal, from the operation. (The emulated device mode's fast path once logged such a result without the
    fraction's check.)"""
    x = device_bytes(12 << 20)
    filler = device_bytes(FRACTION * bounded - torch.cuda.memory_reserved() - (8 << 20))  # < 12 MiB of room left
    with pytest.raises(torch.OutOfMemoryError, match=r"allowed; "):
        x + x  # a new segment of 12 MiB
    del filler
    assert (x + x).numel() == 12 << 20  # the filler's cached segment serves it
