"""What PyTorch's own ``test_cuda.py`` reads of the runtime, answered as on the H100 (each failed emulated at
dfdac4d and passed on the GPU): the device's UUID is an object of 36 characters and 16 bytes (``test_uuid``); NVTX
ranges can be pushed, popped, marked, started and ended (``test_nvtx``); ``cudaHostRegister`` pins host memory in
place until ``cudaHostUnregister`` (``test_cudart_register``), and a call that fails leaves its error for the next
kernel launch to raise, once; and a request of 1 EB or more is refused in the
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
    # with no profiling tool attached, NVTX answers NVTX_NO_PUSH_POP_TRACKING (-2) and a handle of 0 (H100, session 25)
    assert torch.cuda.nvtx.range_push("outer") == -2
    torch.cuda.nvtx.mark("here")
    assert torch.cuda.nvtx.range_pop() == -2
    handle = torch.cuda.nvtx.range_start("across threads")
    assert handle == 0
    torch.cuda.nvtx.range_end(handle)
    with torch.cuda.nvtx.range("scoped {}", 1):
        pass


def test_cuda_host_register_pins_host_memory_in_place_until_unregistered(torch_cuda: str) -> None:
    t = torch.ones(20)
    assert not t.is_pinned()
    cudart = torch.cuda.cudart()
    assert int(cudart.cudaHostRegister(t.data_ptr(), t.numel() * t.element_size(), 0)) == 0
    assert t.is_pinned() and t[5:].is_pinned()
    assert int(cudart.cudaHostUnregister(t.data_ptr())) == 0
    assert not t.is_pinned()


def test_a_failed_runtime_call_leaves_its_error_for_the_next_kernel_launch_once(torch_cuda: str) -> None:
    # CUDA keeps a failed call's error as the thread's last error, and torch's check after the next kernel launch
    # raises it (H100, session 25: a case that ended on a refused cudaHostUnregister made its teardown's normal_ raise)
    t, x = torch.ones(4), torch.zeros(2, device="cuda")
    cudart = torch.cuda.cudart()
    assert int(cudart.cudaHostRegister(t.data_ptr(), 16, 0)) == 0
    assert int(cudart.cudaHostRegister(t.data_ptr(), 16, 0)) == 712  # already registered
    assert int(cudart.cudaHostUnregister(t.data_ptr())) == 0  # a success leaves the last error as it was
    assert int(cudart.cudaHostUnregister(t.data_ptr())) == 713  # not registered: the last error now
    view = x[1:]  # a view launches no kernel
    with pytest.raises(torch.AcceleratorError, match=re.escape("CUDA error: pointer does not correspond to a "
                                                               "registered memory region")):
        x.add_(1)
    assert x.tolist() == [1.0, 1.0]  # the check comes after the launch: the kernel ran (H100, session 25)
    view.add_(1)  # raised once: the launch check reset it
    assert x.tolist() == [1.0, 2.0]


def test_a_request_of_one_exa_byte_or_more_is_refused_in_the_allocators_words(torch_cuda: str) -> None:
    with pytest.raises(torch.OutOfMemoryError, match=re.escape("Tried to allocate more than 1EB memory")):
        torch.empty(2**61, dtype=torch.int8, device="cuda")
