"""``torch.cuda.set_sync_debug_mode`` on the emulated device: the operations a GPU flags as synchronizing, flagged.

torch's C++ calls ``warn_or_error_on_sync()`` where it makes the host wait for the device: mode 1 ("warn") warns
"called a synchronizing CUDA operation", mode 2 ("error") raises a RuntimeError of those words, mode 0 (the default)
says nothing. Which operations do, from the H100 (torch 2.11, session 22, ``evidence/h100-device-calls-2026-12-05-
session22.txt``): reading a device value on the host (``item``, ``bool(t)``, ``tolist``, printing), the operations
whose result's size depends on device data (``nonzero``, ``masked_select``, ``unique``, ``repeat_interleave`` of a
tensor, ``bincount``), indexing by a tensor of indices (host or device) and assignment by one (``index_put_``,
``x[ids] = v``; not a device mask given one host value, which torch runs as a masked fill), a BLOCKING copy between host and device memory in either
direction (``.cpu()``, ``.to("cuda")``, ``torch.tensor(data, device="cuda")``, ``copy_``), and
``Stream.synchronize()``. Not flagged there, so not here: ``torch.equal``, non-blocking copies, copies on the device,
``torch.cuda.synchronize()``, ``Event.synchronize()``, queries, the memory figures, ``empty_cache``, random draws,
sorts, products, a graph's capture and replay.

The same places fire the GPU trace's stream synchronization once ``torch._C._activate_gpu_trace()`` was called, as
torch's C++ does (``flag``). The device mode calls ``check`` for each device operation while the mode is not 0 or the
trace is on (``Runtime.sync_watch``; one attribute test otherwise);
``Tensor.tolist``, printing and ``Stream.synchronize`` read the host without a tensor operation and call ``flag``,
which says nothing in mode 0.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

from seam.capture_guard import COPY_OPS
from seam.torch_cuda.kinds import is_device
from seam.torch_cuda.runtime import runtime

aten = torch.ops.aten
MESSAGE = "called a synchronizing CUDA operation"
#: Operations that read device data on the host, or size their result by it: flagged when they read a device tensor.
SYNCING = frozenset(getattr(getattr(aten, name), overload) for name, overload in (
    ("_local_scalar_dense", "default"), ("nonzero", "default"), ("masked_select", "default"),
    ("_unique2", "default"), ("unique_dim", "default"), ("unique_consecutive", "default"),
    ("repeat_interleave", "Tensor"), ("index", "Tensor"), ("bincount", "default"))
    if hasattr(getattr(aten, name, None), overload))
#: Assignment by indices (``x[ids] = v``, ``index_put_``): flagged unless torch's kernel turns it into a masked fill.
INDEX_PUTS = frozenset(getattr(getattr(aten, name), "default") for name in ("index_put_", "index_put")
                       if hasattr(aten, name))
_MASKS = (torch.bool, torch.uint8)
_TO_COPY = aten._to_copy.default


def set_mode(mode: Any) -> None:
    """``torch._C._cuda_set_sync_debug_mode`` (torch's Python turns "default", "warn", "error" into 0, 1, 2)."""
    if isinstance(mode, bool) or not isinstance(mode, int):
        raise TypeError(f"invalid argument to set_sync_debug_mode: {type(mode).__name__}")
    if not 0 <= mode <= 2:
        raise RuntimeError("invalid value of debug_mode, expected one of 0,1,2")
    rt = runtime()
    rt.sync_debug = mode
    rt.sync_watch = bool(mode) or rt.gpu_trace


def get_mode() -> int:
    """``torch._C._cuda_get_sync_debug_mode``."""
    return runtime().sync_debug


def flag(stream: Any = None) -> None:
    """torch's ``warn_or_error_on_sync()``: the mode's warning or error, nothing in mode 0; then, as torch's C++ does
    at the same places (``c10::cuda::stream_synchronize``, ``memcpy_and_sync``), the GPU trace's stream
    synchronization of ``stream`` (the current stream when None)."""
    rt = runtime()
    mode = rt.sync_debug
    if mode == 2:
        raise RuntimeError(MESSAGE)
    if mode == 1:
        warnings.warn(MESSAGE, UserWarning, stacklevel=3)
    if rt.gpu_trace:
        rt.fire("StreamSynchronizationCallbacks", (stream if stream is not None else rt.current_stream()).cuda_stream)


def check(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Flag ``func(*args, **kwargs)`` if a GPU would (called only while the mode is not 0 or the trace is on)."""
    if func in SYNCING:
        if args and isinstance(args[0], torch.Tensor) and is_device(args[0]):
            flag()
    elif func in INDEX_PUTS:
        if args and is_device(args[0]) and not _a_masked_fill(args[1], args[2]):
            flag()
    elif func in COPY_OPS:
        blocking = not (args[2] if len(args) > 2 else kwargs.get("non_blocking", False))
        if blocking and len(args) > 1 and is_device(args[0]) != is_device(args[1]):
            flag()
    elif func is _TO_COPY and not kwargs.get("non_blocking", False):
        device = kwargs.get("device")
        if device is not None and (torch.device(device).type == "cuda") != is_device(args[0]):
            flag()


def _a_masked_fill(indices: Any, values: torch.Tensor) -> bool:
    """Whether torch's ``index_put_`` runs this as ``masked_fill_`` (its ``can_dispatch_to_masked_fill``): one mask on
    the device and one value on the host; no host read then (H100: ``x[x > 0] = 0.0`` is not flagged). Any other
    assignment by indices sorts or counts its indices on the device and reads the count (flagged, host ids or device
    ids alike)."""
    given = [index for index in indices if index is not None]
    return (len(given) == 1 and given[0].dtype in _MASKS and is_device(given[0]) and values.numel() == 1
            and not is_device(values))


def patches() -> list[tuple[Any, str, Any]]:
    """(owner, name, replacement) for the installation: the two ``torch._C`` functions torch's Python calls."""
    return [(torch._C, "_cuda_set_sync_debug_mode", set_mode), (torch._C, "_cuda_get_sync_debug_mode", get_mode)]
