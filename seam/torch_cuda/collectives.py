"""``torch.distributed``'s collectives on device tensors: run by the group's NCCL backend, recorded in a capture.

``dist.all_reduce(x)`` reaches torch's dispatcher as ``c10d.allreduce_`` (and ``broadcast_``, ``_allgather_base_``,
``barrier``, ...), whose kernel looks up the group's backend FOR THE TENSOR'S DEVICE. A device tensor here is host
memory, so the CPU's kernel ran and asked for the CPU's backend: a group of NCCL alone has none ("No backend type
associated with device type cpu"). The device mode runs these operations on device tensors through their CUDA kernel
instead (``dispatch.py``, ``_OpInfo.python_kernel``), which asks the group's ``cuda`` backend, as on a GPU: for an
NCCL group the emulated one (``nccl.py``). NCCL's average (``ReduceOp.AVG``), which Gloo lacks, is its sum divided by
the group's size. Each call waits for its work: the values are there when it returns.

Inside a capture a GPU records NCCL's kernels into the graph and every replay runs the collective again (every rank
replays its graph). Here the call becomes one operation of ``seamgate_nccl::collective_`` on the tensors it names,
which the capture records as any operation that writes its arguments (its memory is given back at the capture's end,
as a capture writes none) and each replay runs again, on the captured memory. Groups whose backend for ``cuda`` is
not an emulated NCCL (Gloo's, given device tensors) run as before: on the CPU's kernel, not recorded.

Functional collectives (``_c10d_functional.all_reduce``, what compiled tensor-parallel code calls) run their kernel
under the device mode, so the ``c10d`` operation each makes is the one above.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from typing import Any, Callable

import torch
from torch.utils._python_dispatch import _disable_current_modes
from torch.utils._pytree import tree_flatten, tree_unflatten

from seam.torch_cuda import cuda_errors, nccl

#: ``c10d::ReduceOp``'s ``RedOpType`` of an average: NCCL has it, Gloo does not.
_AVG = 1
_CUDA_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
_CPU_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
_GROUP_TYPE = "__torch__.torch.classes.c10d.ProcessGroup"
_OP_TYPE = "__torch__.torch.classes.c10d.ReduceOp"
#: The operations that write the tensors they read: on one rank NCCL has nothing to do for them.
_IN_PLACE = {"allreduce_", "allreduce_coalesced_", "broadcast_", "reduce_"}
#: The operations whose reduction writes their first argument (an average divides what they wrote).
_REDUCING_INTO_FIRST = {"allreduce_", "allreduce_coalesced_", "_reduce_scatter_base_", "reduce_scatter_",
                        "reduce_scatter_tensor_coalesced_", "reduce_"}


def _position(func: Any, type_name: str) -> int | None:
    for i, arg in enumerate(func._schema.arguments):
        if str(arg.type) == type_name:
            return i
    return None


class _Call:
    """One collective as a captured graph runs it again: the ``c10d`` operation and its arguments, with the
    tensors' places left open (a replay passes the captured memory)."""

    def __init__(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        leaves, self.spec = tree_flatten((args, kwargs))
        self.func = func
        self.leaves = leaves
        self.places = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
        self.last: Any = None

    def tensors(self) -> list[torch.Tensor]:
        return [self.leaves[i] for i in self.places]

    def let_go(self) -> None:
        """Hold none of the tensors of the capture (a replay passes the captured memory): a GPU's graph holds no
        tensor, and the caching allocator frees their blocks when the program drops them."""
        for i in self.places:
            self.leaves[i] = None

    def run(self, tensors: list[torch.Tensor]) -> None:
        leaves = list(self.leaves)
        for i, t in zip(self.places, tensors):
            leaves[i] = t
        args, kwargs = tree_unflatten(leaves, self.spec)
        self.last = _on_the_backend(self.func, args, kwargs)


#: Tensor subclasses whose operations the device mode leaves to their own dispatch (``dispatch.py``): wrappers
#: around a device tensor, which unwrap it and call again.
DEFERRED: set[type] = set()
#: The collectives recorded in captures, by the number their recorded operation carries.
_CALLS: dict[int, _Call] = {}
_NUMBERS = itertools.count()
_LIBRARY: list[Any] = []


def _recorded_op() -> Any:
    """``seamgate_nccl::collective_``: defined on the first capture of a collective."""
    if not _LIBRARY:
        lib = torch.library.Library("seamgate_nccl", "DEF")
        lib.define("collective_(Tensor(a!)[] tensors, int call) -> ()")
        lib.impl("collective_", _replayed, "CPU")
        _LIBRARY.append(lib)
    return torch.ops.seamgate_nccl.collective_.default


def _replayed(tensors: list[torch.Tensor], call: int) -> None:
    _CALLS[call].run(tensors)


def _group_of(func: Any, args: tuple[Any, ...]) -> Any:
    at = _position(func, _GROUP_TYPE)
    if at is None or at >= len(args):
        return None
    import torch.distributed as dist
    return dist.ProcessGroup.unbox(args[at])


def _is_average(func: Any, args: tuple[Any, ...]) -> bool:
    at = _position(func, _OP_TYPE)
    return at is not None and at < len(args) and args[at].op() == _AVG


def _nothing_to_launch(func: Any, args: tuple[Any, ...], backend: Any) -> bool:
    """NCCL's one-rank path: a collective in place on a group of one rank launches nothing (a floating average scales,
    a kernel), so a capture of it records nothing (H100, session 37: such a capture is empty)."""
    if backend.size() != 1 or func._opname not in _IN_PLACE:
        return False
    return not (_is_average(func, args) and any(t.is_floating_point() for t in tree_flatten(args[0])[0]))


def _on_the_backend(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``func``'s CUDA kernel (the group's ``cuda`` backend), waited for; an average as a sum, divided."""
    import torch.distributed as dist
    at = _position(func, _OP_TYPE)
    average = _is_average(func, args)
    if average:
        args = (*args[:at], torch.classes.c10d.ReduceOp(), *args[at + 1:])
    # with no dispatch mode on: Gloo's work runs on a thread of its own, which inherits the caller's dispatch keys but
    # not the Python modes' own state (torch 2.11: "tls_on_entry.has_value() INTERNAL ASSERT FAILED" at its wait)
    with _disable_current_modes():
        result = func.redispatch(_CUDA_KEYS, *args, **kwargs)
        works = [leaf for leaf in tree_flatten(result)[0] if isinstance(leaf, torch.ScriptObject)]
        for work in works:
            dist.Work.unbox(work).wait()
    if average and func._opname in _REDUCING_INTO_FIRST:
        size = _group_of(func, args).size()
        for t in tree_flatten(args[0])[0]:
            t.div_(size)
    return result


def _refuse(capture: Any, error: RuntimeError, reason: str) -> RuntimeError:
    """What CUDA refuses inside a capture: the capture is invalidated (its end raises "operation failed due to a
    previous error during capture", the words a GPU ends it with) and ``error`` is raised now."""
    capture.invalidate(reason)
    return error


def _nccl_error(why: str) -> RuntimeError:
    """NCCL's words for a CUDA call it could not make (the H100 hid them behind the capture's end)."""
    import torch.distributed as dist
    major, minor, patch = nccl.version_tuple()
    return dist.DistBackendError(
        f"NCCL error in: ProcessGroupNCCL.cpp, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL "
        f"version {major}.{minor}.{patch}\nncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda "
        f"failure 'operation not permitted when stream is capturing' ({why}; seamgate's CUDA emulator)")


def _c10d_kernel(func: Any, *args: Any, **kwargs: Any) -> Any:
    """A ``c10d`` operation given device tensors (the device mode runs it with itself on)."""
    from seam.torch_cuda.runtime import runtime
    rt = runtime()
    capture = rt.capture_of(rt.current_stream()._id)
    backend = nccl.emulated_backend(_group_of(func, args))
    if backend is None:
        if capture is not None:
            # Gloo given device tensors copies them through the host and waits for the device (H100, session 36)
            why = f"{func} of a group whose backend for the device is not NCCL's (it waits for the device)"
            raise _refuse(capture, cuda_errors.cuda_error(cuda_errors.NOT_PERMITTED, why), why)
        return func.redispatch(_CPU_KEYS, *args, **kwargs)
    if capture is None:
        backend.connected = True
        return _on_the_backend(func, args, kwargs)
    if not backend.connected:
        # NCCL makes a group's communicator at its first collective (or at init_process_group(device_id=...)),
        # which allocates and waits: inside a capture CUDA refuses that (H100, session 36)
        why = "the group's first collective, which makes its NCCL communicator, inside a capture"
        raise _refuse(capture, _nccl_error(why), why)
    if func._opname == "barrier":
        # NCCL's barrier is an all-reduce the host then waits for (H100, session 36)
        why = "a barrier (the host waits for the device) inside a capture"
        raise _refuse(capture, cuda_errors.cuda_error(cuda_errors.NOT_PERMITTED, why), why)
    if _nothing_to_launch(func, args, backend):
        return _on_the_backend(func, args, kwargs)
    call = _Call(func, args, kwargs)
    record(capture, call)
    result, call.last = call.last, None
    return result


def record(capture: Any, call: Any) -> None:
    """Run ``call`` once now as one operation that ``capture`` records, which each replay runs again on the captured
    memory. ``call`` has ``tensors()`` (the memory it reads and writes), ``run(tensors)`` and ``let_go()`` (after
    which it holds none of the capture's tensors); it lives as long as the graph's operation that runs it. The
    current stream must be the capture's."""
    number = next(_NUMBERS)
    _CALLS[number] = call
    recorded = len(capture.ops)
    _recorded_op()(call.tensors(), number)  # through the device mode: recorded, and run once now
    call.let_go()
    if len(capture.ops) > recorded:
        weakref.finalize(capture.ops[-1], _CALLS.pop, number, None)


def _group(name: Any) -> Any:
    """A functional collective's group: its name, or the group itself (boxed as TorchScript's, or not)."""
    import torch.distributed as dist
    from torch.distributed.distributed_c10d import _resolve_process_group
    if isinstance(name, str):
        return _resolve_process_group(name)
    return dist.ProcessGroup.unbox(name) if isinstance(name, torch.ScriptObject) else name


def _op(name: str) -> Any:
    import torch.distributed as dist
    return getattr(dist.ReduceOp, name.upper())


def _reduced(t: torch.Tensor, op: str, group: str) -> torch.Tensor:
    import torch.distributed as dist
    dist.all_reduce(t, _op(op), group=_group(group))
    return t


def _gathered(t: torch.Tensor, size: int, group: str, out: torch.Tensor | None = None) -> torch.Tensor:
    import torch.distributed as dist
    if out is None:
        out = t.new_empty((t.shape[0] * size, *t.shape[1:]))
    dist.all_gather_into_tensor(out, t.contiguous(), group=_group(group))
    return out


def _scattered(t: torch.Tensor, op: str, size: int, group: str, out: torch.Tensor | None = None) -> torch.Tensor:
    import torch.distributed as dist
    if out is None:
        out = t.new_empty((t.shape[0] // size, *t.shape[1:]))
    dist.reduce_scatter_tensor(out, t.contiguous(), _op(op), group=_group(group))
    return out


def _exchanged(t: torch.Tensor, out_sizes: list[int] | None, in_sizes: list[int] | None, group: str) -> torch.Tensor:
    import torch.distributed as dist
    rows = sum(out_sizes) if out_sizes else t.shape[0]
    out = t.new_empty((rows, *t.shape[1:]))
    dist.all_to_all_single(out, t.contiguous(), list(out_sizes) or None, list(in_sizes) or None, group=_group(group))
    return out


def _broadcast(t: torch.Tensor, src: int, group: str) -> torch.Tensor:
    import torch.distributed as dist
    dist.broadcast(t, src, group=_group(group))
    return t


#: ``_c10d_functional``'s operations, as its C++ makes them, through ``torch.distributed``'s calls: their output is
#: made by a device operation (C++ makes it with the input's options, which name the host here) and each collective is
#: the ``c10d`` operation above. The C++ registers no work for ``wait_tensor``: the values are there on return.
_FUNCTIONAL: dict[str, Callable[..., Any]] = {
    "all_reduce": lambda t, op, group: _reduced(t.clone(memory_format=torch.contiguous_format), op, group),
    "all_reduce_": _reduced,
    "all_reduce_coalesced": lambda ts, op, group: [_reduced(t.clone(), op, group) for t in ts],
    "all_reduce_coalesced_": lambda ts, op, group: [_reduced(t, op, group) for t in ts],
    "all_gather_into_tensor": _gathered,
    "all_gather_into_tensor_out": lambda t, size, group, *, out: _gathered(t, size, group, out),
    "all_gather_into_tensor_coalesced": lambda ts, size, group: [_gathered(t, size, group) for t in ts],
    "reduce_scatter_tensor": _scattered,
    "reduce_scatter_tensor_out": lambda t, op, size, group, *, out: _scattered(t, op, size, group, out),
    "reduce_scatter_tensor_coalesced": lambda ts, op, size, group: [_scattered(t, op, size, group) for t in ts],
    "all_to_all_single": _exchanged,
    "broadcast": lambda t, src, group: _broadcast(t.clone(), src, group),
    "broadcast_": _broadcast,
}


def _functional_kernel(func: Any, *args: Any, **kwargs: Any) -> Any:
    """A functional collective given device tensors: the emulated NCCL group's through ``_FUNCTIONAL``, another's
    (Gloo's) through its own kernel."""
    group = _group(kwargs["group_name"] if "group_name" in kwargs else args[-1])
    if nccl.emulated_backend(group) is None:
        return func.redispatch(_CPU_KEYS, *args, **kwargs)
    return _FUNCTIONAL[func._opname](*args, **kwargs)


def kernel_for(func: Any) -> Callable[..., Any] | None:
    """The device mode's kernel for a collective on device tensors, or None for any other operation."""
    namespace = getattr(func, "namespace", None)
    if namespace == "c10d":
        return functools.partial(_c10d_kernel, func)
    if namespace == "_c10d_functional" and func._opname in _FUNCTIONAL:
        return functools.partial(_functional_kernel, func)
    if namespace == "_c10d_functional" and func._opname == "_wrap_tensor_autograd":
        # an ``AsyncCollectiveTensor`` over its input (a wrapper: its memory is the input's, marked already); the
        # operations on it the device mode leaves to its own dispatch, which unwraps it
        from torch.distributed._functional_collectives import AsyncCollectiveTensor
        DEFERRED.add(AsyncCollectiveTensor)
        return functools.partial(func.redispatch, _CPU_KEYS)
    return None
