"""cuDNN on the emulated device: said to be there, as on a GPU, where nothing can reach a cuDNN kernel.

A GPU build answers ``torch.backends.cudnn.is_available()`` True, and code and suites ask it before they run what
they run on the device (PyTorch's ``TEST_CUDNN`` gates 14 cases of ``test_cuda.py``, its autocast ones among them:
on the H100 they passed, here they were skipped). On a CPU-only build no operation can pick a cuDNN kernel for
emulated device memory: C++ checks ``is_cuda()`` of the tensor itself, which is host memory, and the one Python
path that calls a cuDNN function, an RNN's ``flatten_parameters``, first asks ``torch._use_cudnn_rnn_flatten_weight()``,
which such a build answers False. So there the emulation says cuDNN is available, of the version below
(``is_available``, ``_init``, ``version``; ``is_acceptable`` follows from them and ``enabled``), with the benchmark
limit ``torch.backends.cudnn.flags()`` then reads and sets.

A CUDA build on a machine without a GPU has cuDNN compiled in (its ``version()`` is the library's own): there cuDNN
stays on, as on a GPU, and the one Python path to a cuDNN kernel is closed as a CPU-only build closes it, by
``torch._use_cudnn_rnn_flatten_weight()`` answering False inside the emulation (an RNN's ``flatten_parameters`` then
leaves its weights as they are; the build's own ``_cudnn_rnn_flatten_weight`` has no kernel for host memory). Before
session 42 the emulation turned cuDNN off on such a build, and PyTorch's ``TEST_CUDNN`` cases (14 of ``test_cuda.py``,
passed on the H100) were skipped there.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.backends.cudnn

#: What ``torch.backends.cudnn.version()`` answers on the emulated device: cuDNN 9.19.0 (torch's encoding), the
#: H100's (torch 2.11.0+cu130, session 27's device call).
EMULATED_CUDNN_VERSION = 91900


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


def _no_flattened_weights() -> bool:
    """``torch._use_cudnn_rnn_flatten_weight``, as a build without cuDNN answers it."""
    return False


def patches() -> list[tuple[Any, str, Any]]:
    if torch._C._has_cudnn:
        return [(torch, "_use_cudnn_rnn_flatten_weight", _no_flattened_weights)]
    # the module's own namespace, which ``is_acceptable`` reads: ``torch.backends.cudnn`` is a wrapper around it
    module = getattr(torch.backends.cudnn, "m", torch.backends.cudnn)
    limit = _BenchmarkLimit()
    return [(module, "is_available", _available), (module, "_init", _available), (module, "version", _version),
            (torch._C, "_cuda_get_cudnn_benchmark_limit", limit.get),
            (torch._C, "_cuda_set_cudnn_benchmark_limit", limit.set),
            # ``torch.backends.cudnn.benchmark_limit``: None on a build without cuDNN, a property of the wrapper's class
            (type(torch.backends.cudnn), "benchmark_limit", torch.backends.ContextProp(limit.get, limit.set))]
