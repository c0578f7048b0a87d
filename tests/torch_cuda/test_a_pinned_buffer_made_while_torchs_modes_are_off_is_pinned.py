"""A pinned host buffer made while every dispatch mode is off is pinned, as on a GPU build.

Code that turns torch's dispatch modes off for host work (the seam's own ``Backend.alloc_pinned`` does,
so that its capture guard does not see a host allocation) still gets a pinned buffer from
``pin_memory=True``: on a CPU-only build torch's C++ refuses the argument before any mode could see it.
"""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import _disable_current_modes

MAKERS = {
    "zeros": lambda: torch.zeros((2, 3), dtype=torch.int64, pin_memory=True),
    "empty": lambda: torch.empty(4, pin_memory=True),
    "ones": lambda: torch.ones(2, pin_memory=True),
    "full": lambda: torch.full((2,), 5.0, pin_memory=True),
}


@pytest.mark.parametrize("make", MAKERS)
def test_a_host_factory_with_pin_memory_under_disabled_modes_gives_a_pinned_host_tensor(torch_cuda: str,
                                                                                          make: str) -> None:
    with _disable_current_modes():
        buffer = MAKERS[make]()
    assert buffer.is_pinned() and buffer.device.type == "cpu"
    # it serves as the staging block of an asynchronous upload
    device = torch.zeros(buffer.shape, dtype=buffer.dtype, device="cuda")
    device.copy_(buffer.fill_(1), non_blocking=True)
    torch.cuda.synchronize()
    assert device.cpu().tolist() == buffer.tolist()
