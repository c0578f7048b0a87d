"""The device mode: every tensor operation, seen at torch's dispatcher, placed on the emulated device.

One ``TorchDispatchMode`` is on while ``torch.cuda`` is emulated. For each aten operation it:

1. rewrites a ``device="cuda"`` argument to the CPU, and remembers that the result is DEVICE memory
   (a factory, ``_to_copy`` to the device); ``pin_memory=True`` becomes a pinned mark;
2. refuses what a GPU refuses outside any capture: tensors of two devices in one kernel;
3. routes the operation: on a capturing stream into that capture's recorder (which records it, or
   refuses it with the seam's rule, said here in torch's words); on another stream while a capture
   forbids it, through the same checks CUDA's global capture mode makes; else it just runs;
4. marks every new result of a device operation as device memory, so ``.device`` says ``cuda:0``.

The common case (no capture open, no replay in flight, nothing to note: no random draw, no cuDNN handle, cuBLAS
work only once its thread's handle and its stream's workspaces exist, the default pool) takes a fast path: the
operation runs, and its new results are marked and logged to the allocator model in place, with no Python call
(``bench/bench_torch_cuda.py`` measures what each call would cost).

Worked example: ``y = x @ w`` with ``x`` and ``w`` on the device -> ``aten.mm`` runs on the CPU and
``y``'s storage is marked device. Inside a capture the same ``mm`` is recorded; ``y`` is poisoned at
``capture_end`` and written again by every ``replay()``.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import weakref
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch._ops import HigherOrderOperator
from torch._subclasses.fake_tensor import FakeTensorMode

from seam.capture_guard import COPY_OPS, check_copy
from seam.emulator import CaptureRecorder
from seam.errors import CaptureError, PageableCopyError
from seam.torch_cuda import (allocator, collectives, cuda_errors, cuda_kernels, generators, graph_trees, half_gemm,
                             host_cache, in_flight, kernel_limits, kinds, pending, philox, runtime_api, sync_debug,
                             workspaces)
from seam.torch_cuda.allocator import DEFAULT_POOL
from seam.torch_cuda.allocator_events import ALLOC
from seam.torch_cuda.device import (TOTAL_MEMORY, host_memory_available, lazy_init, mem_get_info, memory_allocated,
                                     memory_reserved)
from seam.torch_cuda.fast_calls import FastCall
from seam.torch_cuda.kinds import _ATTR as _KIND
from seam.torch_cuda.kinds import _ALIASED_BY_SIZE as _ALIASED
from seam.torch_cuda.kinds import _BY_ADDRESS as _STORAGES
from seam.torch_cuda.kinds import _real_ptr as _real_storage_ptr
from seam.torch_cuda.kinds import is_device, kind_of, mark_unmarked
from seam.torch_cuda.pending import BUSY as _BUSY
from seam.torch_cuda.pending import DEFERRED as _HELD_FREES
from seam.torch_cuda.runtime import CPU, runtime
from seam.torch_cuda.runtime_api import LAST_ERROR as _LAST_ERROR

aten = torch.ops.aten
#: Bound once: the hot path's ``isinstance`` tests read a module global, not ``torch``'s attribute.
_Tensor = torch.Tensor
_TO_COPY = aten._to_copy.default
_SEEDED = torch.Tag.nondeterministic_seeded
#: Operations whose tensors may sit on two devices: copies, and indexing by host indices.
_MIXED_OK = frozenset({aten.copy_.default, _TO_COPY, aten._copy_from.default, aten._copy_from_and_resize.default,
                       aten.index.Tensor, aten.index_put_.default, aten.index_put.default, aten._index_put_impl_.default,
                       aten.set_.source_Storage_storage_offset, aten.set_.source_Tensor, aten.set_.source_Storage,
                       aten.lift_fresh.default, aten.detach.default, aten.alias.default})
#: Operations whose 0-dim host tensors a GPU refuses beside device tensors, where most kernels take them as scalars
#: (H100, session 22: clamp(x, min=<0-dim host tensor>) "got min is on cpu"; lerp's, addcmul's, where's are taken).
_NO_HOST_SCALARS = frozenset(getattr(aten, n).Tensor for n in ("clamp", "clamp_") if hasattr(aten, n))
#: cuBLAS work: the first in a thread creates the thread's handle, which CUDA refuses inside a capture.
_BLAS = frozenset(getattr(aten, n).default for n in ("mm", "addmm", "bmm", "baddbmm", "addmv", "mv", "dot", "vdot",
                                                      "addbmm", "_addmm_activation") if hasattr(aten, n))
#: cuDNN work: the first in a thread creates the thread's handle, which CUDA refuses inside a capture.
_CUDNN = frozenset(getattr(aten, n).default for n in ("convolution", "_convolution", "cudnn_convolution",
                                                       "cudnn_batch_norm") if hasattr(aten, n))
#: Operations whose CUDA kernels read a device value back into pageable memory on their own (the
#: result's size): torch's pinned-memory check refuses them inside a capture (H200: ``bincount``).
_HIDDEN_HOST_COPY = frozenset(getattr(aten, n).default for n in ("bincount", "histc") if hasattr(aten, n))
_POINTWISE = torch.Tag.pointwise
#: Copies between host and device: a blocking one waits for its stream's queued work, a non-blocking one holds the
#: pinned blocks it uses until that work is done (``_copy_across``; only while a stream is busy).
_COPIES_ACROSS = frozenset({aten.copy_.default, aten._copy_from.default, aten._copy_from_and_resize.default, _TO_COPY})
#: Reads of a device value into host memory, which wait for the stream's queued work (``item()``).
_HOST_READS = frozenset({aten._local_scalar_dense.default})
#: Arguments a GPU's kernel wants in host memory, checked in C++ before it runs (where the emulation reads the CPU for
#: device memory): the operation -> (the argument's position, its name, torch's words, given the tensor's
#: dimensions, device and scalar type). H100, session 22: ``pack_padded_sequence`` with device lengths.
_HOST_ARGUMENTS = {aten._pack_padded_sequence.default: (
    1, "lengths", "'lengths' argument should be a 1D CPU int64 tensor, but got {dim}D {device} {scalar} tensor")}


#: torch's own device class, bound before ``emulate_cuda()`` puts a stand-in under the name (``ordinals``).
_DEVICE = torch.device


def _is_cuda(device: Any) -> bool:
    if isinstance(device, _DEVICE):
        return device.type == "cuda"
    if isinstance(device, str):
        return device.startswith("cuda")
    return False


class _OpInfo(FastCall):
    """What the device mode needs to know of one aten overload, worked out once; ``call`` runs it (``FastCall``)."""

    __slots__ = ("seeded", "blas", "half_math", "cudnn", "mixed_ok", "fresh", "pointwise", "allocates", "plain",
                 "marks", "single", "slow", "new_tensors", "cuda_kernel", "sized", "composite", "no_host_scalars",
                 "special", "python_kernel", "implicit")

    def __init__(self, func: Any) -> None:
        # ``self.func`` (``FastCall``) is held, so that ``id(func)``, the key of ``_INFO``, names this overload as
        # long as the entry lives.
        super().__init__(func)
        self.seeded = _SEEDED in func.tags
        self.blas = func in _BLAS
        #: cuBLAS's or cuDNN's float16 work is computed in fp32, rounded once (``half_gemm.py``).
        self.half_math = self.blas or func in half_gemm.CONVOLUTIONS
        self.cudnn = func in _CUDNN
        self.mixed_ok = func in _MIXED_OK
        self.pointwise = _POINTWISE in func.tags
        #: Per result: whether it is NEW memory (no alias annotation: not an input, not a view of one).
        self.fresh = tuple(r.alias_info is None for r in func._schema.returns)
        self.allocates = any(f and "Tensor" in str(r.type) for f, r in zip(self.fresh, func._schema.returns))
        #: Nothing to note before it runs outside any capture: no RNG draw, no cuBLAS or cuDNN handle.
        self.plain = not (self.seeded or self.blas or self.cudnn)
        #: Never on the fast path: a random draw or a cuDNN handle to note (cuBLAS work is, once its thread's handle
        #: and the stream's workspaces exist: ``_PerThread.blas_ready``).
        self.slow = self.seeded or self.cudnn
        #: The positions of the results that are new tensors, when every result is a single tensor (not a list):
        #: what the fast path marks itself; empty otherwise (``_mark_new`` walks the results).
        returns = func._schema.returns
        self.new_tensors = tuple(i for i, r in enumerate(returns) if self.fresh[i]) if all(
            str(r.type) in ("Tensor", "Optional[Tensor]", "Tensor?") for r in returns) else ()
        #: Whether any result may be new memory to mark (a view's or an in-place op's never is).
        self.marks = any(self.fresh)
        #: One result, and it is new memory: a tensor result is marked without ``_mark_new``'s walk.
        self.single = self.fresh == (True,)
        #: A kernel for CUDA and none for the CPU (a library's operation registered for "CUDA" alone, in Python): on
        #: the device it runs that kernel, as on a GPU, where the CPU's dispatch would find none (``_made_here``).
        name = func.name()
        #: One of torch's own operations whose only kernel is CUDA's, which a CPU-only torch lacks, written in Python
        #: (``cuda_kernels.py``): on the device it runs under the device mode, as ``_made_here`` runs a library's.
        self.python_kernel = cuda_kernels.KERNELS.get(func) or collectives.kernel_for(func)
        self.cuda_kernel = self.python_kernel is not None or (
            func.namespace not in _TORCHS_OWN and _has_kernel(name, "CUDA") and not _has_computed_kernel(name, "CPU"))
        #: Its CPU kernel is its CompositeExplicitAutograd one, which a GPU runs too (no device check of its own): given
        #: host tensors beside device tensors it runs under the device mode, whose checks of the operations it makes
        #: decide (``_made_here``; pack_padded_sequence's host lengths pass, embedding's host ids are refused by
        #: its index_select, as on a GPU).
        self.composite = (func.namespace == "aten" and not _has_kernel(name, "CPU")
                          and _has_kernel(name, "CompositeExplicitAutograd"))
        self.no_host_scalars = func in _NO_HOST_SCALARS
        #: Its kernel is its CompositeImplicitAutograd one, which runs above autograd and so never reaches a dispatch
        #: mode, except where autograd's keys are off: under ``torch.inference_mode()`` (as engines run their models)
        #: and inside a kernel. There a GPU build runs the composite kernel and the operations it makes; run as one
        #: operation here, its CPU result went unmarked (``half()``, ``contiguous()`` and ``reshape`` returned host
        #: tensors, a capture of them recorded nothing) and its handles went unchecked (``linear``'s cuBLAS). The
        #: device mode decomposes it, with itself on, so the operations it makes are device work as on a GPU.
        self.implicit = _has_kernel(name, "CompositeImplicitAutograd")
        #: A rare kind the common path tests once: a CUDA-only kernel, an argument the GPU wants on the host, a
        #: composite operation reached where autograd is off, or a CUDA kernel with a limit the CPU's lacks
        #: (``kernel_limits.py``).
        self.special = (self.cuda_kernel or func in _HOST_ARGUMENTS or func in _HOST_READS or self.implicit
                        or func in kernel_limits.CHECKED)
        #: Where the size of its new memory is read before it runs, for ``_past_the_device``: (position, name, whether
        #: the argument is a tensor whose copy it makes rather than a size); None for the others.
        self.sized = _sized(func) if self.allocates else None


#: Operations whose result is a copy of their first argument, of its size: what ``_past_the_device`` reads.
_COPIES = frozenset(getattr(aten, n).default for n in ("clone", "_to_copy") if hasattr(aten, n))


def _sized(func: Any) -> tuple[int, str, bool] | None:
    if func in _COPIES:
        return 0, "self", True
    for i, arg in enumerate(func._schema.arguments):
        if arg.name == "size" and str(arg.type) in ("List[int]", "SymInt[]", "int[]"):
            return i, "size", False
    return None


def _past_the_device(info: _OpInfo, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """A device allocation larger than the whole device is CUDA's out of memory, refused BEFORE the CPU is asked:
    a host that overcommits memory (``vm.overcommit_memory=1``, common in containers) hands out 4 TiB, and a kernel
    that then writes it (``torch.zeros(2**40, device="cuda")``) fills the host's memory until the kernel's OOM killer
    ends the process (H100 host, session 22). Host work and anything the device could hold go on as before."""
    position, name, copies = info.sized
    value = args[position] if position < len(args) else kwargs.get(name)
    if value is None:
        return
    device = kwargs.get("device")
    if device is not None:
        if not _is_cuda(device):
            return
    elif not (args and isinstance(args[0], torch.Tensor) and is_device(args[0])):
        return
    if copies:
        numel, dtype = value.numel(), kwargs.get("dtype") or value.dtype
    else:
        numel = 1
        for n in value:
            numel *= int(n)
        first = args[0] if args and isinstance(args[0], torch.Tensor) else None
        dtype = kwargs.get("dtype") or (first.dtype if first is not None else torch.get_default_dtype())
    tried = numel * dtype.itemsize
    if tried >= cuda_errors.ONE_EXA_BYTE:
        raise cuda_errors.out_of_memory_past_one_exa_byte()
    if tried > TOTAL_MEMORY:
        raise _out_of_device_memory(tried, beyond=True)
    if tried >= _LARGE:
        available = host_memory_available()
        if available is not None and tried > available:
            raise _out_of_device_memory(tried)


#: Device allocations at least this large are checked against the host's available memory first.
_LARGE = 1 << 30


#: Namespaces of torch's own operations: their kernels are torch's C++ (a CUDA one is never Python).
_TORCHS_OWN = frozenset(("aten", "prims"))


def _has_kernel(name: str, key: str) -> bool:
    """Whether the dispatcher has a kernel of ``name`` for ``key``; False for an operation it does not know
    (TorchScript's ``prim::device``, which a fake tensor's ``device`` is asked through)."""
    try:
        return torch._C._dispatch_has_kernel_for_dispatch_key(name, key)
    except RuntimeError:
        return False


def _has_computed_kernel(name: str, key: str) -> bool:
    try:
        return torch._C._dispatch_has_computed_kernel_for_dispatch_key(name, key)
    except RuntimeError:
        return False


_fake_mode = torch._C._get_dispatch_mode
_FAKE = torch._C._TorchDispatchModeKey.FAKE
#: One entry per ``FakeTensorMode`` entered and not left while the emulation is on: the device mode asks torch whether
#: a fake mode is on only then, so the common operation pays a list's truth test, not a call.
_FAKES: list[None] = []
_fake_enter, _fake_exit = FakeTensorMode.__enter__, FakeTensorMode.__exit__


def _entering_fake(self: FakeTensorMode) -> Any:
    entered = _fake_enter(self)
    _FAKES.append(None)
    return entered


def _leaving_fake(self: FakeTensorMode, *exc: Any) -> Any:
    if _FAKES:
        _FAKES.pop()
    return _fake_exit(self, *exc)


def fake_mode_patches() -> list[tuple[Any, str, Any]]:
    """What ``emulate_cuda()`` puts in place so that the device mode knows when a fake tensor mode may be on (one left
    after the emulation ends keeps its entry: the device mode then asks torch at every operation, as before)."""
    return [(FakeTensorMode, "__enter__", _entering_fake), (FakeTensorMode, "__exit__", _leaving_fake)]

#: Tensor subclasses the device mode leaves to their own dispatch, which unwraps them (``collectives.DEFERRED``).
_DEFERRED = collectives.DEFERRED
#: The dispatch key set that runs an operation's CUDA kernel (``_made_here``).
_CUDA_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
#: The dispatch key set whose kernel of a CompositeExplicitAutograd operation is that composite (``_made_here``).
_CPU_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)

#: The CUDA graph trees' overwritten outputs that live (``graph_trees.py``): empty but where a tree replayed.
_OVERWRITTEN = graph_trees.MARKED

#: By ``id(overload)``: an ``OpOverload``'s own ``__hash__`` is a Python call, paid on every lookup.
_INFO: dict[int, _OpInfo] = {}


class _HigherOrder(Exception):
    """Raised by ``_info`` for a higher-order operator (``torch.cond``, ``while_loop``, ...): no aten overload, never
    cached, so the hot path pays nothing for it (``DeviceMode._higher_order``)."""


def _info(func: Any) -> _OpInfo:
    info = _INFO.get(id(func))
    if info is None:
        if isinstance(func, HigherOrderOperator):
            raise _HigherOrder
        info = _INFO[id(func)] = _OpInfo(func)
    return info


def _tensors(args: Any, kwargs: dict[str, Any]) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            out.append(value)
        elif isinstance(value, (list, tuple)):
            out.extend(v for v in value if isinstance(v, torch.Tensor))
    return out


def _devices_in(values: Any) -> tuple[bool, bool]:
    """(a device tensor among ``values``, a host tensor of at least one dimension among them), looking into lists
    and tuples (aten's ``Tensor[]`` arguments) as ``_tensors`` does. The device mode tests an operation's own
    arguments inline (``DeviceMode.__torch_dispatch__``) and calls this for a list of tensors among them."""
    device_in = host_in = False
    for tensor in _tensors(values, {}):
        if is_device(tensor):
            device_in = True
        elif tensor.is_cpu and tensor.dim() > 0:
            host_in = True
    return device_in, host_in


def _note_handles(rt: Any, info: _OpInfo) -> None:
    """Outside any capture, a cuBLAS or cuDNN operation makes the thread's handle (CUDA refuses its
    creation inside a capture, so the first use in a thread is what a capture checks)."""
    if info.blas:
        rt.blas_threads.add(threading.get_ident())
    if info.cudnn:
        rt.cudnn_threads.add(threading.get_ident())


def _copy_across(func: Any, values: tuple[Any, ...]) -> None:
    """A copy between host and device while a stream is busy (``pending.BUSY``), given its arguments (and result).
    Non-blocking (``copy_``'s and ``_to_copy``'s flag, a bool among them): the pinned blocks it reads or writes are
    held until the current stream's queued work is done (``host_cache.note_copy``). Blocking: the host waits for
    that work, as CUDA's synchronous copy does (PyTorch's ``test_to_non_blocking``: ``query()`` is True after it)."""
    if func not in _COPIES_ACROSS:
        return
    stream_id = runtime().current_stream()._id
    if any(v is True for v in values):
        host_cache.note_copy(stream_id, values)
    else:
        pending.wait_for(stream_id)


def _mark_new(result: Any, kind: str, fresh: tuple[bool, ...]) -> None:
    """Mark the results that are NEW memory as ``kind``: a result the schema says is an input or a
    view of one (``copy_`` into a host tensor returns that host tensor) keeps its memory's kind, and
    a result already marked (an unannotated alias, ``_unsafe_view``) is left as it is."""
    if isinstance(result, torch.Tensor):
        if fresh and fresh[0]:
            mark_unmarked(result, kind)
        return
    if isinstance(result, (list, tuple)):
        for i, r in enumerate(result):
            if not (fresh[i] if i < len(fresh) else (fresh[-1] if fresh else False)):
                continue
            if isinstance(r, torch.Tensor):
                mark_unmarked(r, kind)
            elif isinstance(r, (list, tuple)):
                _mark_new(r, kind, (True,) * len(r))


def _launches_a_kernel(func: Any, args: tuple[Any, ...], kwargs: Any) -> bool:
    """Whether the operation launches a kernel on the device, after which torch checks the thread's last CUDA error:
    one with a device tensor argument that is neither a view nor a copy (a factory's allocation, a view and a memcpy
    launch none)."""
    schema = func._schema
    if func in _COPIES_ACROSS or (not schema.is_mutable and all(r.alias_info is not None for r in schema.returns)):
        return False
    return _devices_in((*args, *(kwargs or {}).values()))[0]


def _refuse_device_memory_for_host(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse, in torch's words, device memory given where the GPU's kernel wants host memory (``_HOST_ARGUMENTS``)."""
    entry = _HOST_ARGUMENTS.get(func)
    if entry is None:
        return
    position, name, words = entry
    value = args[position] if position < len(args) else kwargs.get(name)
    if isinstance(value, torch.Tensor) and is_device(value):
        scalar = torch.empty(0, dtype=value.dtype).type().removeprefix("torch.").removesuffix("Tensor")
        raise RuntimeError(words.format(dim=value.dim(), device="cuda:0", scalar=scalar))


def _mixed_devices(func: Any, info: _OpInfo, args: tuple[Any, ...], kwargs: dict[str, Any]) -> RuntimeError:
    """torch's words for a kernel given tensors of two devices: TensorIterator's for a pointwise
    operation, the kernel wrapper's (naming the argument) for the others."""
    if info.pointwise and not info.no_host_scalars:
        return RuntimeError("Expected all tensors to be on the same device, but found at least two devices, "
                            "cuda:0 and cpu!")
    name = "self"
    for i, arg in enumerate(func._schema.arguments):
        value = args[i] if i < len(args) else kwargs.get(arg.name)
        values = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(v, torch.Tensor) and not is_device(v) and (v.dim() > 0 or info.no_host_scalars)
               for v in values):
            name = arg.name
            break
    return RuntimeError(f"Expected all tensors to be on the same device, but got {name} is on cpu, different from "
                        f"other tensors on cuda:0 (when checking argument in method {_wrapper_name(func)})")


@functools.cache
def _structured_ops() -> frozenset[str]:
    """The names of torch's structured operations, from the ``native_functions.yaml`` torch ships in torchgen (read
    once, on the first refusal that names a kernel wrapper); empty where this torch has no copy of it."""
    found: set[str] = set()
    try:
        import torchgen

        path = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml")
        with open(path, encoding="utf-8") as fh:
            current = None
            for line in fh:
                if line.startswith("- func: "):
                    current = line[8:].split("(", 1)[0].strip()
                elif current and line.lstrip().startswith(("structured_delegate:", "structured: True")):
                    found.add(current)
    except (ImportError, OSError):
        pass
    return frozenset(found)


def _wrapper_name(func: Any) -> str:
    """The name of the generated CUDA kernel wrapper torch's device check names: a structured operation's is its name
    then its overload's (H100: ``wrapper_CUDA_mm``, ``wrapper_CUDA_clamp_Tensor``), another's its overload's then its
    name (``wrapper_CUDA__index_select``, ``wrapper_CUDA_Tensor_searchsorted``); without torchgen's list, the
    structured form, the common one."""
    structured = _structured_ops()
    name, overload = func._schema.name.split("::")[-1], func._overloadname
    full = name if overload == "default" else f"{name}.{overload}"
    if full in structured or not structured:
        return f"wrapper_CUDA_{name}" + (f"_{overload}" if overload != "default" else "")
    return f"wrapper_CUDA_{overload if overload != 'default' else ''}_{name}"


def _translate(err: CaptureError, func: Any, capture: Any) -> RuntimeError:
    """The seam's refusal of ``func`` said in torch's words, invalidating where CUDA invalidates."""
    copying = func in COPY_OPS or func is _TO_COPY
    if isinstance(err, PageableCopyError) or (capture is not None and copying and "pageable" in str(err)):
        # torch's own check, made before CUDA is asked: the capture goes on (H200: ``cpu``, ``tolist``).
        return cuda_errors.torch_error(cuda_errors.PAGEABLE_COPY, str(err))
    for c in runtime().refusing_captures() if capture is None else [capture, *runtime().refusing_captures()]:
        c.invalidate(f"{func}")
    return cuda_errors.cuda_error(cuda_errors.NOT_PERMITTED, str(err))


_CPU_ALLOC_FAILED = "DefaultCPUAllocator: can't allocate memory: you tried to allocate "


def _device_out_of_memory(err: RuntimeError, args: tuple[Any, ...], kwargs: Any) -> Exception | None:
    """The CPU allocator's refusal of device work, said as CUDA's ``torch.OutOfMemoryError``; else None."""
    text = str(err)
    if _CPU_ALLOC_FAILED not in text:
        return None
    device = (kwargs or {}).get("device")
    if not ((device is not None and _is_cuda(device)) or _devices_in((*args, *(kwargs or {}).values()))[0]):
        return None  # host work: the CPU's own error is the right one
    tried = int(text.split(_CPU_ALLOC_FAILED, 1)[1].split(" ", 1)[0])
    return _out_of_device_memory(tried)


def _out_of_device_memory(tried: int, *, beyond: bool = False) -> Exception:
    """CUDA's ``torch.OutOfMemoryError`` for ``tried`` bytes, with the emulated device's figures."""
    free, total = mem_get_info()
    return cuda_errors.out_of_memory(tried, total, free, memory_allocated(), memory_reserved(), beyond=beyond)


class DeviceMode(TorchDispatchMode):
    """Places every aten operation on the emulated device (see the module docstring)."""

    #: A higher-order operator comes here too (torch refuses one a mode does not take): ``_higher_order``.
    supports_higher_order_operators = True

    @classmethod
    def ignore_compile_internals(cls) -> bool:
        """torch.compile traces as if no mode were on, and the compiled code runs under this one
        (``seam/torch_cuda/compiling.py``); else dynamo skips every frame while the emulation is on."""
        return True

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        try:
            if _FAKES and _fake_mode(_FAKE) is not None:
                # a fake tensor mode is on (code working out shapes; torch runs it after every other mode): it
                # makes the fakes, on the device where a GPU build's would be (``device_guard.py``)
                return func(*args, **(kwargs or {}))
            if types and not _DEFERRED.isdisjoint(types):
                # a wrapper around a device tensor with a dispatch of its own (funcol's AsyncCollectiveTensor): it
                # unwraps and calls again with plain tensors, which this mode places (``collectives.py``)
                return NotImplemented
            if _OVERWRITTEN:  # a CUDA graph tree's output a later replay overwrote lives: reading one is refused
                graph_trees.refuse_overwritten((*args, *(kwargs or {}).values()))
            if _HELD_FREES:  # blocks record_stream held back whose streams are done are freed before this allocates
                pending.release_due()
            if _LAST_ERROR and _launches_a_kernel(func, args, kwargs):
                # a failed runtime call's error, raised by torch's check AFTER the next kernel launch: the kernel runs
                # (H100, session 25: the add_ that raised it had added) (``runtime_api.py``)
                error = runtime_api.take_last_error()
                self.__torch_dispatch__(func, types, args, kwargs)
                raise error
            info = _INFO.get(id(func)) or _info(func)
            if info.sized is not None:
                _past_the_device(info, args, kwargs or {})
            if kwargs:
                if "device" in kwargs or "pin_memory" in kwargs:
                    return self._placed(func, types, args, kwargs, info)
                values: Any = (*args, *kwargs.values())
            else:
                kwargs = {}
                values = args
            # which devices the tensors are on: a tensor argument tested here (the common case, no call), a list of
            # tensors by ``_devices_in``, a list of ints (a size, dims: the common list) not at all
            device_in = host_in = False
            for value in values:
                if isinstance(value, _Tensor):
                    if getattr(value.untyped_storage(), _KIND, None) == "device":
                        device_in = True
                    elif value.is_cpu and (value.dim() > 0 or info.no_host_scalars):
                        host_in = True
                elif isinstance(value, (list, tuple)) and value and not isinstance(value[0], int):
                    inner_device, inner_host = _devices_in(value)
                    device_in, host_in = device_in or inner_device, host_in or inner_host
            if kwargs and not device_in and info.seeded:
                generators.refuse_device_generator_on_host(kwargs)
            # No device placement asked: the common case, decided by the tensors alone (``_placed`` with
            # ``target`` None, in fewer steps).
            # ``info.call``: the overload's own generated binding where that is the same call, else ``func._op``
            # (the C++ callable behind the OpOverload, one Python frame less per operation): ``fast_calls.py``
            if not device_in:
                return info.call(*args, **kwargs)  # host work: runs now, in or out of a capture
            if host_in:
                if info.implicit:  # the operations the composite makes decide, as on a GPU
                    return self._made_here(func.decompose, args, kwargs)
                if not info.mixed_ok:
                    if info.composite:
                        if info.special:
                            _refuse_device_memory_for_host(func, args, kwargs)
                        return self._made_here(functools.partial(func.redispatch, _CPU_KEYS), args, kwargs)
                    raise _mixed_devices(func, info, args, kwargs)
                if _BUSY:  # a copy between host and device while a stream is busy (``_copy_across``)
                    _copy_across(func, values)
            if info.special:
                if info.implicit:
                    return self._made_here(func.decompose, args, kwargs)
                if info.cuda_kernel:
                    kernel = info.python_kernel or functools.partial(func.redispatch, _CUDA_KEYS)
                    return self._made_here(kernel, args, kwargs)
                _refuse_device_memory_for_host(func, args, kwargs)
                kernel_limits.check(func, args, kwargs)
                if _BUSY and func in _HOST_READS:
                    pending.wait_for(runtime().current_stream()._id)
            if info.half_math and half_gemm.all_half(values):  # cuBLAS's and cuDNN's fp16: fp32 math, rounded once
                return self._made_here(functools.partial(half_gemm.run, func), args, kwargs)
            rt = runtime()
            per_thread = rt.per_thread
            stream = per_thread.current
            if rt.sync_watch:  # set_sync_debug_mode or the GPU trace: what a GPU flags is flagged (sync_debug.py)
                sync_debug.check(func, args, kwargs or {})
            if not (rt.in_flight or rt.captures or rt.routes or info.slow) and (
                    not info.blas or (per_thread.blas_ready is stream and per_thread.blas_for is rt.workspaces)):
                # the fast path: no replay to wait for, no capture open, no pool recorded to (``routes.py``), no
                # random draw or handle or workspace to note: the operation runs, and its new results are marked and logged
                result = info.call(*args, **kwargs)
                if not info.new_tensors or _ALIASED:  # (while an alias lives, a new result may take its owner's memory)
                    if info.marks:
                        _mark_new(result, "device", info.fresh)
                    return result
                # each new result marked device memory and its allocation logged here, not in a call: ``kinds._allocated``
                # and ``CachingAllocator.note_allocation`` written out for the common case (no memory fraction), which
                # ``bench/bench_torch_cuda.py`` measures (docs/benchmarks.md, session 18)
                alloc = rt.allocator
                for new in (result,) if info.single else [result[i] for i in info.new_tensors]:
                    if not isinstance(new, _Tensor):
                        continue
                    storage = new.untyped_storage()
                    if getattr(storage, _KIND, None) is not None:
                        continue
                    setattr(storage, _KIND, "device")
                    if alloc.one_by_one:  # a fraction's refusal, or its stack frames, come from this allocation
                        kinds._allocated(storage)
                        continue
                    nbytes = storage.nbytes()
                    address = _real_storage_ptr(storage)
                    if nbytes:
                        ref = weakref.ref(storage, alloc.on_death)  # its death logs the reference itself
                        _STORAGES[address] = ref
                        if len(_STORAGES) > kinds._PRUNE_AT:
                            kinds._prune()
                        alloc.log.append((ALLOC, id(ref), nbytes, stream.cuda_stream, DEFAULT_POOL, ref))
                        if len(alloc.log) > allocator.FLUSH_AT:
                            alloc.flush()
                    if allocator.allocation_hook is not None:
                        allocator.allocation_hook(kinds.said_address(address))
                return result
            if rt.in_flight:
                in_flight.settle(rt)  # the replays launched before this operation run first
            if rt.captures or info.seeded:
                result = self._run_on_device(func, types, args, kwargs, None, True, info)
            else:  # no capture open on any stream: nothing to record or route, at most a handle to note
                if not info.plain:
                    _note_handles(rt, info)
                result = info.call(*args, **kwargs)
            if info.marks:
                if info.single and isinstance(result, _Tensor):
                    mark_unmarked(result, "device")  # one new tensor, the common case: ``_mark_new`` inline
                else:
                    _mark_new(result, "device", info.fresh)
            if info.blas:
                workspaces.note(rt, func, args, kwargs)  # after the result, as on a GPU
            return result
        except RuntimeError as err:  # zero-cost while nothing is raised (the hot path pays nothing)
            oom = _device_out_of_memory(err, args, kwargs)
            if oom is None:
                raise
            raise oom from None
        except _HigherOrder:
            return self._higher_order(func, args, kwargs or {})

    def _higher_order(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A higher-order operator (``torch.cond``, ``torch._higher_order_ops.while_loop``, ...) on a GPU with no mode
        on runs its dense kernel, whose pieces are aten operations on the device: here the same kernel (which
        refuses to run under a mode) with this mode on inside each function it is given. ``cond``'s device predicate
        is read under this mode first: a host read, refused in a capture as on a GPU. (A predicate ``while_loop``'s
        kernel reads from its ``cond_fn`` is read with no mode: not refused in a capture.) One with no dense kernel
        is not this mode's to run (torch then says so)."""
        dense = func.py_kernels.get(torch._C.DispatchKey.CompositeExplicitAutograd)
        if dense is None:
            return NotImplemented
        if func is torch.ops.higher_order.cond and isinstance(args[0], _Tensor):
            with self:
                bool(args[0])

        def on_the_device(fn: Any) -> Any:
            if not callable(fn) or isinstance(fn, _Tensor):
                return fn

            @functools.wraps(fn)
            def run(*inner: Any, **named: Any) -> Any:
                with self:
                    return fn(*inner, **named)
            return run
        return dense(*[on_the_device(arg) for arg in args], **kwargs)

    def _made_here(self, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``kernel`` run with this mode on for the operations it makes (which run on the device, are recorded in a
        capture and replayed, and are checked as any other). The kernels:

        - ``func.redispatch`` to ``_CUDA_KEYS``: an operation whose only kernel is its CUDA one
          (``_OpInfo.cuda_kernel``), on device tensors (the kernel is Python: a CPU-only torch loads no compiled CUDA
          kernel);
        - ``func.redispatch`` to ``_CPU_KEYS``: an operation whose kernel is its CompositeExplicitAutograd one, given
          host and device tensors (``_OpInfo.composite``): a GPU runs the same composite, with no device check of its
          own, so the checks of the operations it makes refuse or place them as on a GPU;
        - ``func.decompose``: a CompositeImplicitAutograd operation reached where autograd is off (``_OpInfo.implicit``);
        - ``_OpInfo.python_kernel``: one of torch's CUDA-only operations, written in Python (``cuda_kernels.py``)."""
        with self:
            return kernel(*args, **kwargs)

    def _placed(self, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any], info: _OpInfo) -> Any:
        """An operation with a ``device=`` or ``pin_memory=`` argument: a factory, a copy to a device."""
        if info.implicit:  # ``to.dtype_layout`` under inference mode: the ``_to_copy`` it makes is placed below
            return self._made_here(func.decompose, args, kwargs)
        rt = runtime()
        if rt.sync_watch:
            sync_debug.check(func, args, kwargs)
        if rt.in_flight:
            in_flight.settle(rt)
        target: str | None = None
        device = kwargs.get("device")
        if device is not None:
            target = "device" if _is_cuda(device) else "host"
            if (target == "host" and func is _TO_COPY and not rt.per_thread.host_copy and is_device(args[0])
                    and not _to_copy_named_by_python()):
                # torch's C++ converting with the tensor's own options (``softmax(dtype=)``): the CPU named is
                # where the emulated memory lives, and on a GPU the result stays on the device
                target = "device"
                device = CPU
            if target == "device":
                lazy_init()  # a device tensor initialises CUDA (torch's ``device_lazy_init``)
                if getattr(device, "index", None) not in (None, 0):
                    raise cuda_errors.cuda_error(cuda_errors.INVALID_ORDINAL, f"{device}: the emulated machine has "
                                                 "one device, cuda:0")
                kwargs = {**kwargs, "device": CPU}
        if kwargs.get("pin_memory"):
            kwargs = {**kwargs, "pin_memory": False}
            target = "pinned"
        device_in = False
        host_in = False
        for t in _tensors(args, kwargs):
            if is_device(t):
                device_in = True
            elif t.is_cpu and (t.dim() > 0 or info.no_host_scalars):
                host_in = True
        if device_in and host_in and target is None and not info.mixed_ok:
            if info.composite:
                return self._made_here(functools.partial(func.redispatch, _CPU_KEYS), args, kwargs)
            raise _mixed_devices(func, info, args, kwargs)
        on_device = target == "device" or (target is None and device_in)
        if on_device or device_in:
            result = self._run_on_device(func, types, args, kwargs, target, on_device, info)
        else:
            if info.seeded:
                generators.refuse_device_generator_on_host(kwargs)
            result = func(*args, **kwargs)  # host work: runs now, in or out of a capture
        if target == "pinned":
            _mark_new(result, "pinned", info.fresh)
        elif on_device:
            _mark_new(result, "device", info.fresh)
        if _BUSY and func is _TO_COPY and (is_device(args[0]) != on_device):  # a copy between host and device while a
            _copy_across(func, (*args, kwargs.get("non_blocking", False), result))  # stream is busy (``_copy_across``)
        return result

    def _run_on_device(self, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                       target: str | None, on_device: bool, info: _OpInfo) -> Any:
        rt = runtime()
        seeded = on_device and info.seeded
        if not rt.captures:
            _note_handles(rt, info)
            return self._call(func, args, kwargs, seeded)
        stream = rt.current_stream()
        capture = rt.capture_of(stream._id)
        try:
            if capture is None:
                refusing = rt.refusing_captures()
                if refusing:
                    if on_device and info.allocates:
                        for c in refusing:
                            c.invalidate(f"{func} (device memory allocated outside the capture)")
                        raise cuda_errors.cuda_error(cuda_errors.NOT_PERMITTED, f"{func} allocates device memory on a "
                                                     "stream outside the open capture (global capture mode)")
                    refusing[0].recorder.check_outside(func, args, kwargs)
                return self._call(func, args, kwargs, seeded)
            if capture.reason is not None:
                raise cuda_errors.cuda_error(cuda_errors.INVALIDATED, f"the capture was invalidated by {capture.reason}")
            me = threading.get_ident()
            if info.blas and me not in rt.blas_threads:
                capture.invalidate("the creation of a cuBLAS handle")
                raise cuda_errors.torch_error(cuda_errors.CUBLAS_NOT_INITIALIZED,
                                              "the thread's first matmul ran inside a capture; run it once before")
            if info.cudnn and me not in rt.cudnn_threads:
                capture.invalidate("the creation of a cuDNN handle")
                raise cuda_errors.torch_error(cuda_errors.CUDNN_NOT_INITIALIZED,
                                              "the thread's first convolution ran inside a capture; run it once before")
            if func in _HIDDEN_HOST_COPY or (func is not _TO_COPY and func not in COPY_OPS and any(
                    not is_device(t) and t.is_cpu and t.dim() > 0 and kind_of(t) == "pageable"
                    for t in _tensors(args, kwargs))):
                raise cuda_errors.torch_error(cuda_errors.PAGEABLE_COPY, f"{func} copies pageable host memory to or "
                                              "from the device inside the capture")
            if func is _TO_COPY:
                src = kind_of(args[0])
                dst = "device" if target == "device" else ("pinned" if target == "pinned" else
                                                          ("device" if target is None and on_device else "pageable"))
                check_copy(dst, src, blocking=not kwargs.get("non_blocking", False))
            capture.born_kind = "pinned" if target == "pinned" else "device"
            try:
                if not seeded:
                    return _RECORD(capture.recorder, func, types, args, kwargs)
                return self._record_draw(capture, func, types, args, kwargs)
            finally:
                capture.born_kind = "device"
        except CaptureError as err:
            raise _translate(err, func, capture) from None

    @staticmethod
    def _record_draw(capture: Any, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A random operation recorded in a capture: it draws inside the graph, and the recorded op
        keeps where (``capture.draws``), so that each replay draws anew (``capture._SeededOp``)."""
        state, at, context = generators.record_draw(kwargs)
        recorded = len(capture.ops)
        with context:
            result = _RECORD(capture.recorder, func, types, args, kwargs)
        state.advance(philox.step(func, result))
        if len(capture.ops) > recorded:
            capture.draws[id(capture.ops[-1])] = (state, at)
        return result

    @staticmethod
    def _call(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], seeded: bool) -> Any:
        if seeded:
            state, context = generators.eager_draw(kwargs)
            with context:
                result = func(*args, **kwargs)
            state.advance(philox.step(func, result))
            return result
        return func(*args, **kwargs)


#: ``_to_copy`` called by name from Python: the overload (as an FX graph calls it) or its packet.
_BY_NAME = frozenset(call.__code__ for call in (torch._ops.OpOverload.__call__, torch._ops.OpOverloadPacket.__call__))


def _to_copy_named_by_python() -> bool:
    """Whether the ``_to_copy`` the device mode places was called by name from Python (``torch.ops.aten._to_copy.
    default(x, ..., device=cpu)``: an AOTAutograd graph's ``x.cpu()``), so the CPU it names is the host, as on a GPU;
    torch's C++ converting inside another operation with the tensor's own options names the CPU where the emulated
    memory lives. Read from the frames above the device mode's own (only for a device tensor's ``_to_copy`` to the
    CPU that no ``Tensor.to`` of the emulation made)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code in _OWN_FRAMES:
        frame = frame.f_back
    if frame is None or frame.f_code not in _BY_NAME:
        return False
    called = frame.f_locals.get("self")
    return called is _TO_COPY or called is aten._to_copy


# torch wraps a mode's ``__torch_dispatch__`` to keep dynamo out at class creation; this mode runs
# on every operation of an emulated session, and nothing in it is traced, so it is called as is.
def _as_written(method: Any) -> Any:
    """A dispatch mode's ``__torch_dispatch__`` without the wrapper torch puts around it at class creation."""
    return getattr(method, "__wrapped__", method)


DeviceMode.__torch_dispatch__ = _as_written(DeviceMode.__torch_dispatch__)  # type: ignore[method-assign]
# The capture's recorder, called by this mode, as written too: its wrapper imported ``torch._dynamo`` at its first call
# (about 800 modules, a second or more), inside the process's first capture, which stayed open that long where a GPU's
# is open for microseconds: another thread's synchronize or capture met it (breakable-cuda-graphs'
# ``TestConcurrentCaptures``, run first in its process, failed so where the H100 passes it).
_RECORD = _as_written(CaptureRecorder.__torch_dispatch__)
#: The device mode's frames between an operation's caller and ``_placed``.
_OWN_FRAMES = frozenset({DeviceMode.__torch_dispatch__.__code__, DeviceMode._placed.__code__})
