"""``torch.accelerator`` on the emulated device: it routes to CUDA, as on a CUDA build.

torch's ``torch.accelerator`` functions are Python over ``torch._C._accelerator_*`` primitives, which a CPU-only
build refuses ("Cannot access accelerator device when none is available"). Under emulation the primitives route
to the emulated CUDA device, so torch's own Python above them (its device checks, the flattening of
``memory_stats``, ``device_index``) runs as on a CUDA build; the device queries that were routed before by name
stay so. ``torch.accelerator.Graph`` (torch >= 2.12) becomes ``Graph`` below: torch's Python API over the
emulated ``torch.cuda.CUDAGraph``, which the CUDA backend of torch's ``at::accelerator::Graph`` wraps.

As on the H200 (torch 2.11, ``scripts/accelerator_probe.py``, ``evidence/h200-accelerator-probe-ebdeafa.json``):
the memory figures are ``torch.cuda``'s, key for key; before CUDA is initialised ``memory_stats()`` is empty and
reading the figures initialises nothing; an allocator call for a device other than 0 is refused in the
allocator's words; ``get_device_capability`` is refused ("Backend doesn't support getting device
capabilities."). torch 2.11 has no ``torch.accelerator.Graph``: what its capture mode ``"default"`` means on
CUDA (here: ``"global"``, the ``CUDAGraph`` default) is read from torch's API, not seen on the H200.
"""

from __future__ import annotations

from typing import Any

import torch

from seam.torch_cuda import capture, device, generic, streams
from seam.torch_cuda.runtime import DEVICE, runtime

#: torch's ``torch.accelerator.Graph`` (torch >= 2.12), taken before any emulation replaces the name; else None.
_TORCH_GRAPH = getattr(getattr(torch, "accelerator", None), "Graph", None)
#: ``torch.accelerator.Graph``'s capture modes, and what each is on CUDA.
_MODES = {"default": "global", "global": "global", "thread_local": "thread_local", "relaxed": "relaxed"}


def _allocator_device(index: int) -> int:
    """The caching allocator's check of a device index (``assertValidDevice``), in its words."""
    index = int(index)
    if index != 0:
        shown = chr(index) if 0 <= index < 128 else str(index)  # torch prints the int8 index as a character
        raise RuntimeError(f"Invalid device argument {shown}: did you call init?")
    return index


def _device_stats(index: int) -> dict[str, Any]:
    _allocator_device(index)
    return runtime().allocator.read().stats.nested()


def _reset_peak(index: int) -> None:
    _allocator_device(index)
    device.reset_peak_memory_stats(index)


def _reset_accumulated(index: int) -> None:
    _allocator_device(index)
    device.reset_accumulated_memory_stats(index)


def _device_capability(index: int) -> dict[str, Any]:
    raise RuntimeError("Backend doesn't support getting device capabilities.")


def _exchange_device(index: int) -> int:
    """``device_index(i)``'s entry: the previous device (the one there is), after CUDA's check of ``i``."""
    device.set_device(index)
    return 0


def _synchronize_device(index: int) -> None:
    """``torch.accelerator.synchronize(device)``: CUDA's check of the device, then the device's synchronize."""
    device.set_device(index)
    streams.synchronize()


def _maybe_exchange_device(index: int) -> int:
    return 0


class Graph:
    """``torch.accelerator.Graph`` on the emulated device: torch's API (the pool and the capture mode given when
    the graph is made, ``capture_begin()`` without arguments, a context manager that captures on the current
    stream) over an emulated ``torch.cuda.CUDAGraph``."""

    def __init__(self, keep_graph: bool = False, *, pool: tuple[int, int] | None = None,
                 capture_error_mode: str = "default") -> None:
        self._cuda_graph = capture.CUDAGraph(keep_graph)
        self.graph_pool = pool
        self.capture_error_mode = capture_error_mode

    def capture_begin(self) -> None:
        mode = _MODES.get(self.capture_error_mode)
        if mode is None:
            raise RuntimeError("Unknown capture error mode. Expected `default`, `global`, `thread_local`, or "
                               f"`relaxed`, got {self.capture_error_mode}")
        self._cuda_graph.capture_begin(pool=self.graph_pool, capture_error_mode=mode)

    def capture_end(self) -> None:
        self._cuda_graph.capture_end()

    def instantiate(self) -> None:
        self._cuda_graph.instantiate()

    def replay(self) -> None:
        self._cuda_graph.replay()

    def reset(self) -> None:
        self._cuda_graph.reset()

    def pool(self) -> tuple[int, int]:
        return self._cuda_graph.pool()

    def enable_debug_mode(self) -> None:
        self._cuda_graph.enable_debug_mode()

    def debug_dump(self, path: str) -> None:
        self._cuda_graph.debug_dump(path)

    if _TORCH_GRAPH is not None:
        # torch's own entry and exit, whatever this torch's are (they call public names only: synchronize,
        # empty_cache, ``self.capture_begin()``, ``self.capture_end()``), so a torch that changes them is followed.
        __enter__ = _TORCH_GRAPH.__enter__
        __exit__ = _TORCH_GRAPH.__exit__


Graph.__module__, Graph.__qualname__ = "torch.accelerator.graphs", "Graph"


def _get_accelerator(check: bool = False) -> torch.device:
    """``torch._C._get_accelerator()``: the device type CUDA builds find (``torch.distributed`` picks NCCL for it when
    no backend is named, and makes a barrier's tensor there; FSDP places modules by it)."""
    return DEVICE.__class__("cuda")


#: ``torch._C``'s primitives under ``torch.accelerator``, those this torch has.
_PRIMITIVES = {
    "_get_accelerator": _get_accelerator,
    "_accelerator_isAllocatorInitialized": device.is_initialized,
    "_accelerator_getDeviceStats": _device_stats,
    "_accelerator_getMemoryInfo": device.mem_get_info,
    "_accelerator_emptyCache": device.empty_cache,
    "_accelerator_emptyHostCache": device.empty_host_cache,
    "_accelerator_resetPeakStats": _reset_peak,
    "_accelerator_resetAccumulatedStats": _reset_accumulated,
    "_accelerator_getDeviceCapability": _device_capability,
    "_accelerator_exchangeDevice": _exchange_device,
    "_accelerator_synchronizeDevice": _synchronize_device,
    "_accelerator_maybeExchangeDevice": _maybe_exchange_device,
}


def _current_stream(device: Any = None, /) -> Any:
    """``torch.accelerator.current_stream``: the emulated current stream, as a generic ``torch.Stream`` (on a GPU it
    is one, never a ``torch.cuda.Stream``: session 23's probe). Its own function, not ``torch.cuda``'s, as in torch:
    dynamo registers one handler per function and refuses one twice."""
    return generic.Stream._wrap(streams.current_stream(device))


def _set_stream(stream: Any) -> None:
    """``torch.accelerator.set_stream``: its own function, not ``torch.cuda``'s (see ``_current_stream``)."""
    streams.set_stream(stream)


def patches() -> list[tuple[Any, str, Any]]:
    """(owner, name, replacement) for the installation: ``torch.accelerator``'s device queries and ``Graph``, and
    the ``torch._C`` primitives under the rest; only what this torch has."""
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is None:
        return []
    by_name = {"is_available": device.is_available, "device_count": device.device_count,
               "current_accelerator": lambda check_available=False: DEVICE.__class__("cuda"),
               "current_device_index": device.current_device, "current_device_idx": device.current_device,
               "set_device_index": device.set_device, "set_device_idx": device.set_device,
               "current_stream": _current_stream, "set_stream": _set_stream, "Graph": Graph}
    out: list[tuple[Any, str, Any]] = [(accelerator, name, value) for name, value in by_name.items()
                                       if hasattr(accelerator, name)]
    graphs = getattr(accelerator, "graphs", None)
    if graphs is not None and hasattr(graphs, "Graph"):
        out.append((graphs, "Graph", Graph))
    out.extend((torch._C, name, value) for name, value in _PRIMITIVES.items() if hasattr(torch._C, name))
    return out
