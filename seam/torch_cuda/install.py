"""``emulate_cuda()``: put the emulated device under ``torch.cuda``, and take it away again exactly.

Installing replaces names in torch's own modules (``torch.cuda``, ``torch.cuda.graphs``,
``torch.cuda.streams``, ``torch.cuda.memory``, ``torch.cuda.random``, ``torch.accelerator``,
``torch._C``, ``torch.Generator``) and on ``torch.Tensor``, and pushes the device mode; uninstalling puts back every
value it replaced (or deletes what was not there) in reverse order and pops the mode. torch's own
Python code above those names (``torch.cuda.graph``, ``make_graphed_callables``) then runs unmodified
on the emulated device. Nested ``emulate_cuda()`` blocks share the outermost installation.

Children: inside the block ``SEAM_EMULATE_CUDA=1`` is set and a start-up hook is put first on
``PYTHONPATH`` (``seam/torch_cuda/autostart/sitecustomize.py``), so a child interpreter a test starts
runs emulated too (lane identity runs in children); the emulated ``nvidia-smi`` is first on ``PATH``
(``seam/torch_cuda/bin``, run by ``SEAM_PYTHON``). All are restored on the way out. A starter that
sets the child's ``PYTHONPATH`` itself passes its environment through ``child_environment``.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

import torch
import torch.backends.cuda
import torch.cuda.graphs
import torch.cuda.memory
import torch.cuda.random
import torch.cuda.streams

from seam.torch_cuda import (accelerator, addresses, allocator, attention, autocast, backward_streams, capture, compile_time_runs, compiling, ctc, cuda_comm,
                              checkpoints, cuda_bindings, cudnn, device, device_factories, device_guard, driver_api, gc_pace, generators, graph_trees, host_cache, in_flight, kinds,
                              legacy_types, memory_history, mempool, nccl, nccl_direct, nccl_library, nvml, on_import, pending, pools, routes, runtime_api, scripting, serialization, shared_libraries, storages,
                              streams, sync_debug, torch_c, workspaces)
from seam.torch_cuda.dispatch import DeviceMode, fake_mode_patches
from seam.torch_cuda.generic import GENERIC_PATCHES
from seam.torch_cuda.addresses import storage_at
from seam.torch_cuda.ordinals import ordinal_patches
from seam.torch_cuda.runtime import activate_gpu_trace, reset, runtime
from seam.torch_cuda.tensor_methods import TENSOR_PATCHES
from seam.torch_cuda.threads import THREAD_PATCHES

F = TypeVar("F", bound=Callable[..., Any])
ENV = "SEAM_EMULATE_CUDA"
AUTOSTART = Path(__file__).resolve().parent / "autostart"
#: Programs of the emulated device (``nvidia-smi``), first on ``PATH`` inside the block; they run ``PYTHON``'s value.
TOOLS = Path(__file__).resolve().parent / "bin"
PYTHON = "SEAM_PYTHON"
_MISSING = object()


def _storage_from_pointer(data_ptr: int, device_: Any, nbytes: int) -> torch.UntypedStorage:
    """A storage over the device memory at ``data_ptr``, as torch makes one on a GPU (``kinds.alias``:
    it keeps the memory alive, where a GPU's caching allocator keeps it mapped). An empty storage has no memory and a
    null pointer on a GPU (a CUDA graph tree rebuilds an empty output so): a new empty device storage."""
    if not data_ptr and not nbytes:
        empty = torch.UntypedStorage(0)
        kinds.mark_storage(empty, "device")
        return empty
    owner = storage_at(int(data_ptr), int(nbytes))
    if owner is None:
        raise RuntimeError(f"seamgate's CUDA emulator: no device storage starts at {data_ptr:#x}")
    return kinds.alias(owner, int(nbytes))


def _tensor_from_storage(metadata: dict[str, Any], storage: torch.UntypedStorage) -> torch.Tensor:
    out = torch.empty(0, dtype=metadata["dtype"])
    return out.set_(storage, metadata["storage_offset"], metadata["size"], metadata["stride"])


def _noop(*args: Any, **kwargs: Any) -> None:
    return None


class _AllocatorState:
    """``torch._C._cuda_CUDAAllocator_AllocatorState`` stands in on a CPU-only build: with CUDA said to be
    built, ``torch._inductor.cudagraph_trees`` imports it (``torch._dynamo.reset()`` imports that module)."""


def _patches() -> list[tuple[Any, str, Any]]:
    """(owner, name, replacement): everything ``install`` replaces, in order."""
    cuda = torch.cuda
    table: dict[str, Any] = {
        "is_available": device.is_available, "device_count": device.device_count,
        "current_device": device.current_device, "set_device": device.set_device,
        "get_device_name": device.get_device_name, "get_device_capability": device.get_device_capability,
        "get_device_properties": device.get_device_properties, "get_arch_list": device.get_arch_list,
        "is_initialized": device.is_initialized, "_lazy_init": device.lazy_init, "init": device.lazy_init,
        "device": device.device, "_exchange_device": device.exchange_device,
        "_maybe_exchange_device": device.maybe_exchange_device,
        "Stream": streams.Stream, "ExternalStream": streams.ExternalStream, "Event": streams.Event,
        "current_stream": streams.current_stream, "default_stream": streams.default_stream,
        "set_stream": streams.set_stream, "stream": streams.stream, "StreamContext": streams.StreamContext,
        "synchronize": streams.synchronize,
        "CUDAGraph": capture.CUDAGraph, "graph": capture.graph, "graph_pool_handle": capture.graph_pool_handle,
        "is_current_stream_capturing": capture.is_current_stream_capturing,
        "memory_allocated": device.memory_allocated, "max_memory_allocated": device.max_memory_allocated,
        "memory_reserved": device.memory_reserved, "max_memory_reserved": device.max_memory_reserved,
        "reset_peak_memory_stats": device.reset_peak_memory_stats,
        "reset_max_memory_allocated": device.reset_max_memory_allocated, "empty_cache": device.empty_cache,
        "mem_get_info": device.mem_get_info, "memory_stats": device.memory_stats,
        "memory_stats_as_nested_dict": device.memory_stats_as_nested_dict,
        "get_allocator_backend": device.get_allocator_backend, "ipc_collect": device.ipc_collect,
        "memory_summary": device.memory_summary, "memory_snapshot": device.memory_snapshot,
        "reset_accumulated_memory_stats": device.reset_accumulated_memory_stats,
        "manual_seed": device.manual_seed, "manual_seed_all": device.manual_seed, "seed": device.seed,
        "seed_all": device.seed, "initial_seed": device.initial_seed, "get_rng_state": device.get_rng_state,
        "get_rng_state_all": device.get_rng_state_all, "set_rng_state": device.set_rng_state,
        "set_rng_state_all": device.set_rng_state_all,
    }
    out: list[tuple[Any, str, Any]] = [(cuda, name, value) for name, value in table.items()]
    for module in (torch.cuda.graphs, torch.cuda.streams, torch.cuda.memory, torch.cuda.random):
        out.extend((module, name, value) for name, value in table.items() if hasattr(module, name))
    out.extend([
        (torch._C, "_activate_gpu_trace", activate_gpu_trace),
        (torch._C, "_host_emptyCache", device.empty_host_cache),
        (torch._C, "_cuda_sleep", streams.sleep),
        # cuBLAS workspaces are freed in the allocator model (``workspaces.py``); their sizes are read when made.
        (torch._C, "_cuda_clearCublasWorkspaces", workspaces.clear),
        (torch._C, "_cuda_resetCublasWorkspaceSize", _noop),
        (torch._C, "_cuda_resetCublasLtWorkspaceSize", _noop),
        (torch._C, "_construct_storage_from_data_pointer", _storage_from_pointer),
        (torch._C, "_construct_CUDA_Tensor_From_Storage_And_Metadata", _tensor_from_storage),
        (torch._C, "_cuda_record_memory_history", memory_history.record_memory_history),
        (torch._C, "_cuda_record_memory_history_legacy", memory_history.record_memory_history_legacy),
        (torch._C, "_cuda_memorySnapshot", memory_history.memory_snapshot),
        (torch._C, "_cuda_allocationTraceback", memory_history.allocation_traceback),
        (torch._C, "_storage_Use_Count", pools.gpu_use_count),
    ])
    # What a CUDA build's torch._C has and modules gated on ``torch.backends.cuda.is_built()`` import.
    out.extend((torch._C, name, value) for name, value in (("_cuda_CUDAAllocator_AllocatorState", _AllocatorState),
                                                            ("_set_cached_tensors_enabled", _noop))
               if not hasattr(torch._C, name))
    out.extend(cudnn.patches())  # said to be there where nothing can reach it, else off (``cudnn.py``)
    out.append((cuda, "default_generators", (generators.default_generator(),)))
    out.append((torch, "Generator", generators.Generator))
    out.append((torch.backends.cuda, "is_built", lambda: True))
    out.append((torch.version, "cuda", device.EMULATED_CUDA_VERSION))
    out.extend(accelerator.patches())
    out.extend(TENSOR_PATCHES)
    out.extend(ordinal_patches(DeviceMode))
    out.append(serialization.registry_patch())
    out.extend(THREAD_PATCHES)
    out.extend(GENERIC_PATCHES)
    out.extend(autocast.PATCHES)
    out.extend(mempool.patches())
    out.extend(routes.patches())
    out.extend(addresses.patches())
    out.extend(torch_c.patches())
    out.extend(legacy_types.patches())
    out.extend(runtime_api.patches())
    out.extend(compiling.patches())
    out.extend(fake_mode_patches())
    out.extend(graph_trees.patches())
    out.extend(checkpoints.patches())
    out.extend(sync_debug.patches())
    out.extend(ctc.patches())
    out.extend(storages.patches())
    out.extend(backward_streams.patches())
    out.extend(attention.patches())
    # NVML, the driver and NCCL's own library through ctypes
    out.extend(shared_libraries.patches(nvml.LIBRARY, driver_api.LIBRARY, nccl_library.LIBRARY))
    out.extend(nccl.library_patches())
    out.extend(nccl_direct.patches())  # torch.cuda.nccl's direct calls
    out.extend(cuda_comm.patches())  # torch.cuda.comm: DataParallel's scatter and gather
    return out


class _Installation:
    """The replaced values, the pushed mode and the environment, to put back on the way out."""

    def __init__(self) -> None:
        self.saved: list[tuple[Any, str, Any]] = []
        #: The TorchScript builtins entered for the replacements (``scripting.py``).
        self.scripted: list[int] = []
        self.mode = DeviceMode()
        self.env: dict[str, str | None] = {}
        #: Takes the CUDA device guard of a CPU-only torch out of c10's registry again (``device_guard.py``).
        self.remove_guard: Callable[[], None] = _noop
        #: Ends the device factories' kernels at torch's CUDA key (``device_factories.py``).
        self.remove_factories: Callable[[], None] = _noop

    def apply(self) -> None:
        reset()
        runtime_api.reset()
        try:
            self.remove_guard = device_guard.install()
            self.remove_factories = device_factories.register(self.mode)
            patches = _patches()
            self.replace(patches)
            self.scripted = scripting.register((saved, value) for (_, _, saved), (_, _, value) in zip(self.saved, patches))
            self._set_env()
            compiling.forget_what_dynamo_looked_up()
            cuda_bindings.install()  # ``import cuda.bindings.runtime`` finds the stand-in, installed package or not
            # replacements in modules the emulation does not import itself, made as they are imported
            on_import.watch(compile_time_runs.patches(self.mode), self.replace)
            on_import.watch({nccl.MODULE: nccl.patches}, self.replace)  # NCCL process groups (``nccl.py``)
            self.mode.__enter__()
        except BaseException:
            self.restore_names()
            raise

    def replace(self, patches: Sequence[tuple[Any, str, Any]]) -> None:
        """Put each replacement in place, keeping the value it replaces (or that there was none)."""
        for owner, name, value in patches:
            self.saved.append((owner, name, owner.__dict__.get(name, _MISSING) if isinstance(owner, type)
                               else getattr(owner, name, _MISSING)))
            setattr(owner, name, value)
        compiling.run_as_written(value for _, _, value in patches)

    def _set_env(self) -> None:
        for key in (ENV, "PYTHONPATH", "PATH", PYTHON):
            self.env[key] = os.environ.get(key)
        os.environ[ENV] = "1"
        os.environ["PYTHONPATH"] = _hooked(self.env["PYTHONPATH"])
        os.environ["PATH"] = _tools_first(self.env["PATH"])  # the emulated nvidia-smi (``nvidia_smi.py``)
        os.environ[PYTHON] = sys.executable

    def restore_names(self) -> None:
        on_import.stop()
        nccl.forget()
        nccl_library.forget()
        nccl_direct.forget()
        for owner, name, value in reversed(self.saved):
            if value is _MISSING:
                if name in (owner.__dict__ if isinstance(owner, type) else vars(owner)):
                    delattr(owner, name)
            else:
                setattr(owner, name, value)
        self.saved.clear()
        scripting.unregister(self.scripted)
        self.scripted = []
        compiling.forget_what_dynamo_looked_up()
        cuda_bindings.remove()
        self.remove_guard()
        self.remove_guard = _noop
        self.remove_factories()
        self.remove_factories = _noop
        for key, value in self.env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self.env.clear()

    def remove(self) -> None:
        in_flight.settle(runtime())  # the replays launched in the emulation finish in it
        allocator.allocation_hook = None
        pending.reset()  # the frees record_stream held back happen in it
        host_cache.reset()  # the cached pinned blocks go back to the system
        gc_pace.reset()  # the collector's thresholds as they were
        try:
            self.mode.__exit__(None, None, None)
        finally:
            autocast.close()
            self.restore_names()


_lock = threading.RLock()
_depth = 0
_installation: _Installation | None = None


def is_emulating() -> bool:
    """Whether ``torch.cuda`` is the emulated device right now."""
    return _installation is not None


class emulate_cuda:
    """Context manager and decorator: inside, a CPU-only torch has one emulated CUDA device.

    >>> with emulate_cuda():
    ...     x = torch.ones(4, device="cuda")   # cuda:0, computed on the CPU
    ...     g = torch.cuda.CUDAGraph()
    """

    def __enter__(self) -> "emulate_cuda":
        global _depth, _installation
        with _lock:
            if _depth == 0:
                installation = _Installation()
                installation.apply()
                _installation = installation
            _depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        global _depth, _installation
        with _lock:
            _depth -= 1
            if _depth == 0 and _installation is not None:
                installation, _installation = _installation, None
                installation.remove()

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with emulate_cuda():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def _hooked(pythonpath: str | None) -> str:
    """``pythonpath`` with the start-up hook's folder and the seam's root first (once each)."""
    roots = [str(AUTOSTART), str(AUTOSTART.parents[2])]
    rest = [p for p in pythonpath.split(os.pathsep) if p not in roots] if pythonpath else []
    return os.pathsep.join(roots + rest)


def _tools_first(path: str | None) -> str:
    """``path`` with the emulated device's programs' folder first (once)."""
    rest = [p for p in path.split(os.pathsep) if p and p != str(TOOLS)] if path else []
    return os.pathsep.join([str(TOOLS), *rest])


def child_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` for a child of this process that must run as this process does (a copy).

    Inside ``emulate_cuda()``, where ``env`` says ``SEAM_EMULATE_CUDA=1`` (as ``os.environ`` does there),
    the start-up hook goes back first on its ``PYTHONPATH``: a starter that sets ``PYTHONPATH`` to its own
    folder keeps the variable but drops the hook, and its child would say it is emulated and run on the
    real ``torch.cuda``. Outside the block, or where the starter took the variable away or set it
    otherwise, ``env`` is returned unchanged: such a child sees what the starter chose.
    """
    out = dict(env)
    if is_emulating() and out.get(ENV) == "1":
        out["PYTHONPATH"] = _hooked(out.get("PYTHONPATH"))
        if "PATH" in out:  # a child without PATH searches the system's default folders: left so
            out["PATH"] = _tools_first(out["PATH"])
        out.setdefault(PYTHON, sys.executable)
    return out


def activate() -> None:
    """Emulate ``torch.cuda`` for the rest of this process (a child started with ``SEAM_EMULATE_CUDA=1``)."""
    emulate_cuda().__enter__()


def iter_patched_names() -> Iterator[str]:
    """Every dotted name the installation replaces (documentation and tests read it)."""
    for owner, name, _ in _patches():
        yield f"{getattr(owner, '__name__', owner)}.{name}"
