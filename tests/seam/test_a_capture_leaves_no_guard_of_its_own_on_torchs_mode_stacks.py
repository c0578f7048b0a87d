"""A capture leaves torch's mode stacks as it found them: a user's own mode ends where its block ends.

While a capture is open the seam keeps guards on torch's function and dispatch mode stacks (the host
reads and the copies CUDA refuses). At the close, and at an abort, it takes them off again. So a
user's ``TorchFunctionMode`` or ``TorchDispatchMode`` opened around a captured step stops seeing
calls when its ``with`` block ends: torch pops the TOP mode at a block's end, and a guard left above
the user's mode would be popped in its place, leaving the user's mode on for good.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from seam import Backend, BreakableGraph, CaptureMode, GraphCaptureScope


class CountsFunctions(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        self.calls += 1
        return func(*args, **(kwargs or {}))


class CountsDispatches(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        self.calls += 1
        return func(*args, **(kwargs or {}))


def capture_an_increment(backend: Backend, x: torch.Tensor, ended: str) -> None:
    g = BreakableGraph(backend, CaptureMode.FULL)
    if ended == "closed":
        with GraphCaptureScope(backend, backend.default_queue(), g):
            x.add_(1)
        return
    with pytest.raises(ValueError, match="the user's own error"):
        with GraphCaptureScope(backend, backend.default_queue(), g):
            x.add_(1)
            raise ValueError("the user's own error")


@pytest.mark.parametrize("ended", ["closed", "aborted"])
@pytest.mark.parametrize("mode_type", [CountsFunctions, CountsDispatches], ids=["function mode", "dispatch mode"])
def test_a_users_mode_around_a_capture_sees_no_call_after_its_block_ends(backend: Backend, ended: str,
                                                                         mode_type: type) -> None:
    x = backend.to_device(torch.zeros(4))
    with mode_type() as mode:
        capture_an_increment(backend, x, ended)
        capture_an_increment(backend, x, ended)
    assert mode.calls > 0  # it did see the captures' calls while its block was open
    seen = mode.calls
    torch.add(x, 1)
    x.mul(2)
    assert mode.calls == seen, f"the user's mode saw {mode.calls - seen} call(s) after its block ended"

