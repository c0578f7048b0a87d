"""A bare device ordinal (``device=0``, ``device=torch.cuda.current_device()``) read as ``cuda:0``.

On a CUDA build torch reads an int device as an index of the CUDA device; on a CPU-only build its C++
argument parser asks the accelerator registry first and raises "Cannot access accelerator device
when none is available." before any Python runs. Engines write the int form often
(``torch.empty(n, device=torch.cuda.current_device())``), so every factory and ``Tensor.new_*``
that takes ``device=`` is wrapped: an int there becomes ``"cuda:N"`` and the call goes on to torch's
own function; ``torch._C._nn._parse_to`` (what ``Tensor.to`` and ``Module.to`` read their arguments
with) reads a first positional int the same way.

``torch.device(0)`` itself: ``torch.device`` is a C type that cannot be subclassed, so the name
``torch.device`` is given a stand-in class (``device``) whose metaclass makes every call return torch's
own device (a bare int read as ``cuda:N``) and keeps ``isinstance(x, torch.device)`` true for torch's
devices. Every device object stays torch's own. Pickling is unchanged: torch's ``device.__reduce__``
looks the name ``torch.device`` up when it runs, so a device pickles as a call of the stand-in (saved
by that name) and unpickles to torch's own device with or without the emulation. What does notice it:
``type(d) is torch.device`` is False for every device inside the emulation (docs/torch-cuda.md).

``with torch.device("cuda"):`` (the default device for factories) works because torch's set of
factory functions is built at import here, before any factory is wrapped.

A factory that names the device while every dispatch mode is off (dynamo compiles so, and its
``verify_correctness`` copies a graph's real inputs with ``torch.empty(..., device=x.device)``) runs under a device
mode of its own, so it makes a device tensor as on a GPU build; the CPU-only build's empty CUDA backend raised
NotImplementedError there. Operations on existing device tensors while the modes are off still run as plain CPU
kernels (docs/torch-cuda.md, known gaps).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import torch
import torch.utils._device
from torch.utils import _python_dispatch

from seam.torch_cuda.kinds import mark

# ``with torch.device("cuda"):`` gives a factory the device when the function called is in a set torch
# builds on first use and keeps: built while the factories below are wrapped, it would hold the
# wrappers and never match torch's own functions (which the wrappers call), so it is built now.
torch.utils._device._device_constructors()

#: torch's own device class (the C type), bound before any stand-in replaces the name.
TORCH_DEVICE = torch.device

#: ``torch`` functions that take ``device=`` (``tensor`` and ``as_tensor`` are ``tensor_methods``').
FACTORIES = ("arange", "asarray", "bartlett_window", "blackman_window", "empty", "empty_like", "empty_permuted",
             "empty_strided", "eye", "full", "full_like", "hamming_window", "hann_window", "kaiser_window",
             "linspace", "logspace", "normal", "ones", "ones_like", "rand", "rand_like", "randint", "randint_like",
             "randn", "randn_like", "randperm", "range", "scalar_tensor", "tril_indices", "triu_indices", "zeros",
             "zeros_like")
#: ``Tensor`` methods that take ``device=``.
NEW_METHODS = ("new_empty", "new_empty_strided", "new_full", "new_ones", "new_zeros")


def as_cuda(device: Any) -> Any:
    """``device`` with a bare int (not a bool) read as ``"cuda:N"``; anything else unchanged."""
    if type(device) is int:
        return f"cuda:{device}"
    return device


def _wrapped(original: Callable[..., Any], device_mode: Callable[[], Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        if type(kwargs.get("device")) is int:
            kwargs["device"] = as_cuda(kwargs["device"])
        if not _python_dispatch._get_current_dispatch_mode_stack():
            if kwargs.get("pin_memory"):
                return _pinned_without_modes(original, args, kwargs)
            if _names_the_device(kwargs.get("device")):
                with device_mode():
                    return original(*args, **kwargs)
        return original(*args, **kwargs)
    return call


def _names_the_device(device: Any) -> bool:
    """Whether a factory's ``device=`` is the CUDA device (a string, torch's device, or the stand-in's)."""
    if device is None:
        return False
    try:
        return TORCH_DEVICE(device).type == "cuda"
    except (RuntimeError, TypeError):
        return False


def _pinned_without_modes(original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``pin_memory=True`` while every dispatch mode is off (the device mode, which marks pinned buffers,
    cannot see the call): a CPU-only build refuses the argument in C++, so the host buffer is made
    without it and marked pinned here. A device target keeps the argument (torch's own refusal)."""
    device = kwargs.get("device")
    if device is not None and TORCH_DEVICE(device).type != "cpu":
        return original(*args, **kwargs)
    result = original(*args, **{**kwargs, "pin_memory": False})
    mark(result, "pinned")
    return result


_parse_to = torch._C._nn._parse_to


def parse_to(*args: Any, **kwargs: Any) -> Any:
    """``torch._C._nn._parse_to`` with an int device (first positional or ``device=``) read as cuda."""
    if args and type(args[0]) is int:
        args = (as_cuda(args[0]),) + args[1:]
    if type(kwargs.get("device")) is int:
        kwargs["device"] = as_cuda(kwargs["device"])
    return _parse_to(*args, **kwargs)


class _DeviceMeta(type):
    """Calls make torch's own device; ``isinstance``/``issubclass`` answer for torch's device class."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and type(args[0]) is int:
            return TORCH_DEVICE("cuda", args[0])
        return TORCH_DEVICE(*args, **kwargs)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, TORCH_DEVICE)

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return isinstance(subclass, type) and issubclass(subclass, TORCH_DEVICE)

    # Equal to torch's class, and hashed as it: code that keeps ``torch.device`` in a table or compares a type with
    # it (dynamo's constant types, torch.fx's globals for generated code) finds torch's devices by either name.
    def __eq__(cls, other: Any) -> bool:
        return other is cls or other is TORCH_DEVICE

    def __ne__(cls, other: Any) -> bool:
        return not (other is cls or other is TORCH_DEVICE)

    def __hash__(cls) -> int:
        return hash(TORCH_DEVICE)


class device(metaclass=_DeviceMeta):
    """``torch.device`` under emulation: ``torch.device(0)`` is ``cuda:0``, as on a CUDA build."""


device.__module__, device.__qualname__, device.__doc__ = "torch", "device", TORCH_DEVICE.__doc__


def ordinal_patches(device_mode: Callable[[], Any]) -> list[tuple[Any, str, Any]]:
    """(owner, name, replacement) for ``torch.device``, ``_parse_to``, every factory and ``new_*``
    method of this torch. ``device_mode`` makes the emulation's device mode (``dispatch.DeviceMode``): a factory
    that names the device while every dispatch mode is off runs under one."""
    out: list[tuple[Any, str, Any]] = [(torch, "device", device), (torch._C._nn, "_parse_to", parse_to)]
    out += [(torch, n, _wrapped(getattr(torch, n), device_mode)) for n in FACTORIES if hasattr(torch, n)]
    out.extend((torch.Tensor, n, _wrapped(getattr(torch.Tensor, n), device_mode))
               for n in NEW_METHODS if hasattr(torch.Tensor, n))
    return out
