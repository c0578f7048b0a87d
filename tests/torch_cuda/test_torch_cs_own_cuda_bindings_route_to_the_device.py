"""``torch._C``'s own ``_cuda_*`` bindings, called directly as code written elsewhere calls them, route to the device.

PyTorch's test harness sets each CUDA test's stream with ``torch._C._cuda_setStream`` (``CudaNonDefaultStream`` in
``torch.testing._internal.common_utils``); under the emulator a CPU-only build had no such name, so every test of
PyTorch's own ``test_cuda.py`` graph tests errored before its body ("module 'torch._C' has no attribute
'_cuda_setStream'", 53 of them). Kernel launchers read ``_cuda_getCurrentRawStream``; allocator tools
``_cuda_memoryStats``.
"""

from __future__ import annotations

import torch


def test_a_stream_set_by_its_id_is_current_and_reads_back_as_a_triple(torch_cuda: str) -> None:
    side, before = torch.cuda.Stream(), torch.cuda.current_stream()
    try:
        torch._C._cuda_setStream(stream_id=side.stream_id, device_index=side.device_index,
                                 device_type=side.device_type)
        assert torch.cuda.current_stream() == side
        triple = torch._C._cuda_getCurrentStream(0)
        assert tuple(triple) == (side.stream_id, side.device_index, side.device_type)
        assert torch.cuda.Stream(stream_id=triple[0], device_index=triple[1], device_type=triple[2]) == side
        assert torch._C._cuda_getCurrentRawStream(0) == side.cuda_stream
        x = torch.ones(4, device="cuda") * 2  # work on the stream set so
        assert x.sum().item() == 8
    finally:
        torch._C._cuda_setStream(stream_id=before.stream_id, device_index=before.device_index,
                                 device_type=before.device_type)
    assert torch.cuda.current_stream() == before
    default = torch._C._cuda_getDefaultStream(0)
    assert tuple(default) == (torch.cuda.default_stream().stream_id, 0, torch.cuda.default_stream().device_type)


def test_the_device_queries_and_the_allocators_figures(torch_cuda: str) -> None:
    assert torch._C._cuda_getDeviceCount() == torch.cuda.device_count() >= 1
    assert torch._C._cuda_getDevice() == torch.cuda.current_device()
    torch._C._cuda_setDevice(torch.cuda.current_device())
    assert torch._C._cuda_isInBadFork() is False
    assert torch._C._cuda_getArchFlags().split() == torch.cuda.get_arch_list()
    x = torch.empty(1000, device="cuda")
    stats = torch._C._cuda_memoryStats(torch.cuda.current_device())
    assert stats["allocated_bytes"]["all"]["current"] == torch.cuda.memory_allocated()
    del x
    torch._C._cuda_synchronize()
    torch._C._cuda_emptyCache()
    assert torch.cuda.memory_reserved() == torch._C._cuda_memoryStats(0)["reserved_bytes"]["all"]["current"]


def test_the_compiled_cuda_version_is_the_one_torch_version_names(torch_cuda: str) -> None:
    # PyTorch's torch.testing._internal.jit_utils reads it as it is imported, on any machine where CUDA is available
    major, minor = torch.version.cuda.split(".")[:2]
    assert torch._C._cuda_getCompiledVersion() == int(major) * 1000 + int(minor) * 10
