"""aten's factories reached on torch's CUDA backend while the device mode is off: they make device tensors.

The device mode places a factory that names the device (``dispatch.DeviceMode._placed``) and a ``torch.*`` factory
called while every mode is off runs under one (``ordinals.py``). What reaches torch's CUDA backend key is the rest:
an aten overload called by name on the device while the device mode is off (``torch.ops.aten.empty.memory_format(
[3], device=cuda:0)`` under ``_disable_current_modes``), which a CPU-only torch has
no kernel for ("Could not run 'aten::empty.memory_format' with arguments from the 'CUDA' backend"), where a GPU makes
the tensor. (dynamo's ``verify_correctness`` once reached it so, running a compiled graph at compile time with every
mode off; that run is device work under the device mode since session 34: ``compile_time_runs.py``.)

So while the emulation is on, each aten operation that takes ``device=`` and has a kernel of its own per backend
(not a composite one, which ends in these) gets a kernel at the ``CUDA`` key that hands the call to the device mode,
which places it as any factory (``torch.library``; the registration ends with the emulation, and torch's own
kernel, where a CUDA build has one, is the key's again). On a CUDA build on a machine without a GPU, PyPI's default,
torch's own kernel asks for a driver that is not there ("Found no NVIDIA driver on your system"), so it is replaced
there too.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import torch

#: The overloads that take ``device=`` and have per-backend kernels of their own (the composite factories, ``zeros``,
#: ``arange``, ``full``, ``randn``..., make their tensors with ``empty``): the quantized ones and ``from_file`` left
#: out.
FACTORIES = ("empty.memory_format", "empty_strided", "tril_indices", "triu_indices", "_efficientzerotensor")


def _kernel(op: Any, mode: Any) -> Callable[..., Any]:
    def on_the_device(*args: Any, **kwargs: Any) -> Any:
        return mode.__torch_dispatch__(op, (), args, kwargs)
    return on_the_device


def register(mode: Any) -> Callable[[], None]:
    """Give each factory a CUDA kernel that ``mode`` (the device mode) runs; what ends it."""
    lib = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():  # torch warns of each kernel of its own replaced (a CUDA build's): put back at the end
        warnings.simplefilter("ignore")
        for name in FACTORIES:
            packet, _, overload = name.partition(".")
            lib.impl(name, _kernel(getattr(getattr(torch.ops.aten, packet), overload or "default"), mode), "CUDA")
    return lib._destroy
