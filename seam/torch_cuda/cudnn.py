"""cuDNN on the emulated device: said to be there, as on a GPU, where nothing can reach a cuDNN kernel.

A GPU build answers ``torch.backends.cudnn.is_available()`` True, and code and suites ask it before they run what
they run on the device (PyTorch's ``TEST_CUDNN`` gates 14 cases of ``test_cuda.py``, its autocast ones among them:
on the H100 they passed, here they were skipped). On a CPU-only build no operation can pick a cuDNN kernel for
emulated device memory: C++ checks ``is_cuda()`` of the tensor itself, which is host memory, and the one Python
path that calls a cuDNN function, an RNN's ``flatten_parameters``, first asks ``torch._use_cudnn_rnn_flatten_weight()``,
which such a build answers False. So there the emulation says cuDNN is available, of the version below
(``is_available``, ``_init``, ``version``; ``is_acceptable`` follows from them and ``enabled``), with the benchmark
limit ``torch.backends.cudnn.flags()`` then reads and sets.

A CUDA build on a machine without a GPU has cuDNN compiled in, and there an RNN's C++ picks ``_cudnn_rnn`` for a
tensor that says ``cuda``, before the device mode sees it: the emulation turns cuDNN off there (torch's own switch,
set and put back), so it answers as a build without cuDNN.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.backends.cudnn

#: What ``torch.backends.cudnn.version()`` answers on the emulated device: cuDNN 9.19.0 (torch's encoding), the
#: H100's (torch 2.11.0+cu130, session 27's device call).
EMULATED_CUDNN_VERSION = 91900


class _CudnnFlag:
    """torch's cuDNN switch as an attribute the installation can set and put back: its own, in ``torch._C``, which
    ``torch.backends.cudnn.enabled`` refuses to set after ``disable_global_flags()`` (PyTorch's test base calls it)."""

    @property
    def enabled(self) -> bool:
        return torch._C._get_cudnn_enabled()

    @enabled.setter
    def enabled(self, value: bool) -> None:
        torch._C._set_cudnn_enabled(value)


_CUDNN = _CudnnFlag()


class _BenchmarkLimit:
    """``torch._C``'s cuDNN benchmark limit, which a build without cuDNN lacks and ``torch.backends.cudnn.flags()``
    reads and sets once cuDNN is available: the number of algorithms benchmarked (torch's default 10; 0 is all)."""

    def __init__(self) -> None:
        self.value = 10

    def get(self) -> int:
        return self.value

    def set(self, value: int) -> None:
        self.value = int(value)


def _available() -> bool:
    return True


def _version() -> int:
    return EMULATED_CUDNN_VERSION


def patches() -> list[tuple[Any, str, Any]]:
    if torch._C._has_cudnn:
        return [(_CUDNN, "enabled", False)]
    # the module's own namespace, which ``is_acceptable`` reads: ``torch.backends.cudnn`` is a wrapper around it
    module = getattr(torch.backends.cudnn, "m", torch.backends.cudnn)
    limit = _BenchmarkLimit()
    return [(module, "is_available", _available), (module, "_init", _available), (module, "version", _version),
            (torch._C, "_cuda_get_cudnn_benchmark_limit", limit.get),
            (torch._C, "_cuda_set_cudnn_benchmark_limit", limit.set),
            # ``torch.backends.cudnn.benchmark_limit``: None on a build without cuDNN, a property of the wrapper's class
            (type(torch.backends.cudnn), "benchmark_limit", torch.backends.ContextProp(limit.get, limit.set))]
