"""A thread pool made before ``emulate_cuda()`` (at import, as engines make theirs) runs the work given
it inside the emulation on the emulated device, and plain CPU torch again after the block: each work
item runs under a device mode of its own, pushed and popped around it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

from seam.torch_cuda import emulate_cuda


def _made_on_cuda() -> tuple[str, bool]:
    t = torch.ones(2, device="cuda") * 2
    return str(t.device), t.is_cuda


def _modes_here() -> int:
    return len(_get_current_dispatch_mode_stack())


def test_work_given_to_a_pool_made_before_the_block_runs_on_the_emulated_device() -> None:
    with ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(_modes_here).result() == 0  # the worker thread exists before the block
        with emulate_cuda():
            assert pool.submit(_made_on_cuda).result() == ("cuda:0", True)
        assert pool.submit(_modes_here).result() == 0  # nothing left behind in the worker
        assert str(pool.submit(lambda: torch.ones(2).device).result()) == "cpu"


def test_a_pool_made_inside_the_block_gets_one_device_mode_not_two() -> None:
    with emulate_cuda():
        with ThreadPoolExecutor(max_workers=1) as pool:
            assert pool.submit(_made_on_cuda).result() == ("cuda:0", True)
            assert pool.submit(_modes_here).result() == 1
