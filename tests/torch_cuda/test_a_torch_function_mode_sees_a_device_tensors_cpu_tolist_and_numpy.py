"""The emulated ``Tensor.cpu``/``tolist``/``numpy`` reach a torch-function mode, as torch's own methods do.

On a GPU ``x.cpu()`` is a C++ method that dispatches to the active torch-function modes first; the seam's
host-read guard (``seam/capture_guard.py`` ``HostReadGuard``) is one, and refuses a host read of device
memory in a capture with ``CaptureSyncError`` (the H200's signature for ``cpu_in_capture``,
``tolist_in_capture``, ``numpy_in_capture``: ``tests/fidelity``). The emulation's replacements are plain
Python; before they dispatched, the guard never saw the call on the emulated device and torch's own
pageable-copy refusal came first (issue 24: the fidelity corpus's three cases on the ``cpu-emulated`` arm).
"""

from __future__ import annotations

from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from seam.torch_cuda import emulate_cuda

WATCHED = ("cpu", "tolist", "numpy")


class Seen(TorchFunctionMode):
    """Records the name of every function that reaches it, and runs it."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        self.names.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


def test_a_device_tensors_cpu_tolist_and_numpy_reach_the_active_torch_function_mode_and_still_work() -> None:
    with emulate_cuda():
        x = torch.ones(2, device="cuda")
        with Seen() as seen:
            host = x.cpu()
            values = x.tolist()
            array = host.numpy()
        assert [n for n in seen.names if n in WATCHED] == ["cpu", "tolist", "numpy"]
        assert host.device == torch.device("cpu") and x.device == torch.device("cuda", 0)
        assert values == [1.0, 1.0] and array.tolist() == [1.0, 1.0]


def test_without_a_mode_the_methods_are_called_once_each_and_give_the_same_values() -> None:
    with emulate_cuda():
        x = torch.full((2,), 3.0, device="cuda")
        assert x.cpu().tolist() == x.tolist() == [3.0, 3.0] and x.cpu().numpy().tolist() == [3.0, 3.0]
