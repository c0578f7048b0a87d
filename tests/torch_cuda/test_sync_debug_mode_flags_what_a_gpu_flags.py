"""``torch.cuda.set_sync_debug_mode``: the operations a GPU flags as synchronizing are flagged, the others are not.

Tests of capture-safe code switch it on ("error") to prove a step makes the host wait nowhere. Which operations a
GPU flags, from the H100 (torch 2.11, session 22): ``seam/torch_cuda/sync_debug.py`` lists them.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Iterator

import pytest
import torch

MESSAGE = "called a synchronizing CUDA operation"


@pytest.fixture
def x(torch_cuda: str) -> Iterator[torch.Tensor]:
    torch.manual_seed(0)
    yield torch.randn(4, 3, device="cuda")
    torch.cuda.set_sync_debug_mode(0)


FLAGGED: dict[str, Callable[[torch.Tensor], Any]] = {
    "item": lambda x: x[0, 0].item(),
    "bool": lambda x: bool(x[0, 0] > 0),
    "tolist": lambda x: x.tolist(),
    "cpu": lambda x: x.cpu(),
    "nonzero": lambda x: x.nonzero(),
    "mask": lambda x: x[x > 0],
    "unique": lambda x: torch.unique(x),
    "index_by_host_ids": lambda x: x[torch.tensor([0, 2])],
    "copy_into_pageable": lambda x: torch.empty(4, 3).copy_(x),
    "copy_from_pageable": lambda x: x.copy_(torch.ones(4, 3)),
    "to_device": lambda x: torch.ones(3).to("cuda"),
    "tensor_on_device": lambda x: torch.tensor([1.0, 2.0], device="cuda"),
    "stream_synchronize": lambda x: torch.cuda.Stream().synchronize(),
    "print": lambda x: repr(x),
    # Probed on the H100 at 5c7867f (session 23): assignment by ids sorts and counts them on the device.
    "assign_by_host_ids": lambda x: x.index_put_((torch.tensor([0, 1]),), torch.zeros(2, 3, device="cuda")),
    "assign_by_device_ids": lambda x: x.__setitem__(torch.arange(2, device="cuda"), 1.0),
    "bincount": lambda x: torch.bincount(torch.arange(3, device="cuda")),
}
QUIET: dict[str, Callable[[torch.Tensor], Any]] = {
    "equal": lambda x: torch.equal(x, x),
    "copy_into_pinned_non_blocking": lambda x: torch.empty(4, 3).pin_memory().copy_(x, non_blocking=True),
    "copy_on_the_device": lambda x: x.clone().copy_(x),
    "sum_and_argmax": lambda x: (x.sum(), x.argmax()),
    "device_synchronize": lambda x: torch.cuda.synchronize(),
    "event_synchronize": lambda x: torch.cuda.current_stream().record_event().synchronize(),
    "sort_and_topk": lambda x: (x.sort(), x.topk(2)),
    "mm": lambda x: x @ x.T,
    "memory_stats": lambda x: torch.cuda.memory_stats(),
    # torch runs one device mask given one host value as a masked fill: no count read (H100, session 23).
    "assign_by_a_device_mask": lambda x: x.__setitem__(x > 0, 0.0),
    "masked_fill": lambda x: x.masked_fill(x > 0, 0.0),
}


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_a_synchronizing_operation_warns_in_warn_mode_and_raises_in_error_mode(x: torch.Tensor, name: str) -> None:
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("warn")
    with pytest.warns(UserWarning, match=MESSAGE):
        FLAGGED[name](x)
    torch.cuda.set_sync_debug_mode("error")
    with pytest.raises(RuntimeError, match=MESSAGE):
        FLAGGED[name](x)
    assert torch.cuda.get_sync_debug_mode() == 2


@pytest.mark.parametrize("name", sorted(QUIET))
def test_an_operation_the_gpu_does_not_flag_runs_in_error_mode(x: torch.Tensor, name: str) -> None:
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # nor does it warn
        QUIET[name](x)


def test_the_default_mode_says_nothing_and_a_bad_mode_is_refused_in_torchs_words(x: torch.Tensor) -> None:
    assert torch.cuda.get_sync_debug_mode() == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        x[0, 0].item()
    with pytest.raises(RuntimeError, match="invalid value of debug_mode, expected one of `default`, `warn`, `error`"):
        torch.cuda.set_sync_debug_mode("loud")
