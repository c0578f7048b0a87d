"""What PyTorch's own ``test_cuda.py`` reads of the runtime, answered as on the H100 (each failed emulated at
dfdac4d and passed on the GPU): the device's UUID is an object of 36 characters and 16 bytes (``test_uuid``); NVTX
ranges can be pushed, popped, marked, started and ended (``test_nvtx``); ``cudaHostRegister`` pins host memory in
place until ``cudaHostUnregister`` (``test_cudart_register``); and a request of 1 EB or more is refused in the
caching allocator's own words (``test_out_of_memory``).
"""

from __future__ import annotations

import re

import pytest
import torch


def test_the_device_uuid_is_36_characters_and_16_bytes(torch_cuda: str) -> None:
    uuid = torch.cuda.get_device_properties(0).uuid
    assert len(str(uuid)) == 36 and str(uuid).count("-") == 4
    assert len(uuid.bytes) == 16


def test_nvtx_ranges_push_pop_mark_start_and_end(torch_cuda: str) -> None:
    depth = torch.cuda.nvtx.range_push("outer")
    torch.cuda.nvtx.mark("here")
    assert isinstance(depth, int) and isinstance(torch.cuda.nvtx.range_pop(), int)
    handle = torch.cuda.nvtx.range_start("across threads")
    assert isinstance(handle, int)
    torch.cuda.nvtx.range_end(handle)
    with torch.cuda.nvtx.range("scoped {}", 1):
        pass


def test_cuda_host_register_pins_host_memory_in_place_until_unregistered(torch_cuda: str) -> None:
    t = torch.ones(20)
    assert not t.is_pinned()
    cudart = torch.cuda.cudart()
    assert int(cudart.cudaHostRegister(t.data_ptr(), t.numel() * t.element_size(), 0)) == 0
    assert t.is_pinned() and t[5:].is_pinned()
    assert int(cudart.cudaHostRegister(t.data_ptr(), t.numel() * t.element_size(), 0)) == 712  # already registered
    assert int(cudart.cudaHostUnregister(t.data_ptr())) == 0
    assert not t.is_pinned()
    assert int(cudart.cudaHostUnregister(t.data_ptr())) == 713  # not registered


def test_a_request_of_one_exa_byte_or_more_is_refused_in_the_allocators_words(torch_cuda: str) -> None:
    with pytest.raises(torch.OutOfMemoryError, match=re.escape("Tried to allocate more than 1EB memory")):
        torch.empty(2**61, dtype=torch.int8, device="cuda")
