"""``torch.cuda.caching_allocator_enable(False)`` turns the caching allocator off, on both arms: each new device
allocation is CUDA's own (``cudaMalloc``), in no figure of the caching allocator, nor is its free; turned on again,
new allocations count. On a CPU-only torch ``torch._C._cuda_cudaCachingAllocator_enable`` was missing
(PyTorch's ``test_cachingAllocator_raw_alloc`` passed on the H100 and raised AttributeError emulated).
``seam/torch_cuda/mempool.py``, ``allocator.set_enabled``."""

from __future__ import annotations

import gc

import pytest
import torch

# The caching allocator's figures: on the cuda arm in a process of their own (conftest.py).
pytestmark = pytest.mark.own_process


def _requested(field: str = "allocated") -> int:
    """The requested bytes' figure: ``allocated`` (all ever handed out) or ``current``."""
    return torch.cuda.memory_stats()[f"requested_bytes.all.{field}"]


def _enabled() -> bool | None:
    """``torch._C._cuda_cudaCachingAllocator_is_enabled()`` where this torch has it (None where not)."""
    ask = getattr(torch._C, "_cuda_cudaCachingAllocator_is_enabled", None)
    return None if ask is None else ask()


@pytest.fixture
def allocator_back_on():
    torch.cuda.synchronize()
    gc.collect()
    try:
        yield
    finally:
        torch.cuda.caching_allocator_enable(True)


def test_allocations_with_the_allocator_off_are_in_no_figure(torch_cuda: str, allocator_back_on) -> None:
    torch.cuda.caching_allocator_enable(False)
    assert _enabled() in (False, None)
    before, requested = torch.cuda.memory_allocated(), _requested()
    x = torch.ones(1 << 18, device="cuda")
    assert x.device == torch.device("cuda", 0) and x.sum().item() == 1 << 18
    assert torch.cuda.memory_allocated() == before and _requested() == requested
    del x
    gc.collect()
    assert torch.cuda.memory_allocated() == before
    torch.cuda.caching_allocator_enable(True)
    assert _enabled() in (True, None)
    y = torch.ones(1 << 18, device="cuda")
    assert torch.cuda.memory_allocated() == before + (1 << 20) and _requested() == requested + (1 << 20)
    del y


def test_raw_alloc_counts_only_with_the_allocator_on(torch_cuda: str, allocator_back_on) -> None:
    stream = torch.cuda.current_stream().cuda_stream
    torch.cuda.caching_allocator_enable(False)
    start = _requested()
    off = torch._C._cuda_cudaCachingAllocator_raw_alloc(1 << 20, stream)
    assert _requested() == start
    torch.cuda.caching_allocator_enable(True)
    start, in_use = _requested(), _requested("current")
    on = torch._C._cuda_cudaCachingAllocator_raw_alloc(1 << 20, stream)
    assert _requested() == start + (1 << 20)
    torch._C._cuda_cudaCachingAllocator_raw_delete(on)
    # the counted block freed (the "allocated" figure only grows); the other was never the allocator's
    assert _requested("current") == in_use and off != on
