"""A storage torch makes from a device pointer (``torch._C._construct_storage_from_data_pointer``, as
cudagraph trees do) shares the owner's memory and keeps it alive: on a GPU the caching allocator
keeps freed memory mapped, so reading such an alias after its owner dies never crashes; on the
emulated device the alias holds the owner, so it never reads freed CPU memory either."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

import pytest
import torch

# The owner dies (its last tensor and storage go), heap churn reuses freed memory, then the alias is
# read and written. A non-owning alias reads freed memory here: the process segfaults or reads junk.
CHILD = textwrap.dedent("""
    import gc, torch
    from seam.torch_cuda import emulate_cuda
    with emulate_cuda():
        n = 1 << 22
        owner = torch.full((n,), 7.0, device="cuda")
        s = owner.untyped_storage()
        alias = torch._C._construct_storage_from_data_pointer(s.data_ptr(), owner.device, s.nbytes())
        del owner, s
        gc.collect()
        churn = [torch.empty(n).fill_(-1.0) for _ in range(8)]
        view = torch.empty(0).set_(alias, 0, (n,), (1,))
        view[0] = 3.0
        print(float(view[0]), float(view[1]), float(view[-1]))
""")


@pytest.mark.slow
def test_reading_an_alias_after_its_owner_is_freed_sees_the_owners_values() -> None:
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the child died with {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.split() == ["3.0", "7.0", "7.0"]


def test_the_alias_and_its_owner_share_one_memory(emulated: None) -> None:
    owner = torch.zeros(4, device="cuda")
    s = owner.untyped_storage()
    alias = torch._C._construct_storage_from_data_pointer(s.data_ptr(), owner.device, s.nbytes())
    assert alias.data_ptr() == s.data_ptr()
    view = torch._C._construct_CUDA_Tensor_From_Storage_And_Metadata(
        {"dtype": torch.float32, "storage_offset": 0, "size": (4,), "stride": (1,)}, alias)
    view[1] = 5.0
    owner[2] = 6.0
    assert owner.tolist() == [0.0, 5.0, 6.0, 0.0]
    assert view.tolist() == [0.0, 5.0, 6.0, 0.0]
    assert view.device == torch.device("cuda", 0)


def test_memory_only_an_alias_refers_to_counts_as_freed_as_on_a_gpu(emulated: None) -> None:
    owner = torch.ones(1 << 20, device="cuda")  # 4 MiB
    s = owner.untyped_storage()
    alias = torch._C._construct_storage_from_data_pointer(s.data_ptr(), owner.device, s.nbytes())
    held = torch.cuda.memory_allocated()
    del owner, s
    gc.collect()
    assert torch.cuda.memory_allocated() <= held - (1 << 22), "an alias kept its owner's memory allocated"
    assert alias.nbytes() == 1 << 22
