"""The refusals real CUDA makes inside a stream capture, as a torch dispatch mode.

Both capture-capable backends push a ``CaptureGuard`` while a capture is open, so a host sync or a
pageable host-to-device copy inside capture raises the SAME seam error on the CPU emulator and on
CUDA (where, unguarded, it would invalidate the capture with a less specific CUDA error).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Literal

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

from seam import collector
from seam.op_args import tensors
from seam.errors import (
    CaptureDependencyError,
    CaptureError,
    CaptureInvalidatedError,
    CaptureStateError,
    CaptureSyncError,
    CaptureWarmupError,
    PageableCopyError,
)

MemoryKind = Literal["device", "pinned", "pageable"]
aten = torch.ops.aten


def _overloads(*names: str) -> frozenset[Any]:
    found = []
    for name in names:
        packet, _, overload = name.partition(".")
        op = getattr(aten, packet, None)
        if op is not None and hasattr(op, overload or "default"):
            found.append(getattr(op, overload or "default"))
    return frozenset(found)


#: Operations that read a device value back to the host (a synchronization) or whose output shape
#: depends on device data (which needs one). Real CUDA invalidates the capture on each.
SYNC_OPS = _overloads(
    "_local_scalar_dense",
    "item",
    "is_nonzero",
    "equal",
    "nonzero",
    "masked_select",
    "_unique2",
    "unique_dim",
    "unique_consecutive",
    "repeat_interleave.Tensor",
)

COPY_OPS = _overloads("copy_")
#: Indexing ops whose boolean-mask form needs ``nonzero`` (a data-dependent shape).
MASK_INDEX_OPS = _overloads("index.Tensor", "index_put_", "index_put", "_index_put_impl_")


class CaptureGuard(TorchDispatchMode):
    """Raises the seam's capture errors for work that real CUDA refuses inside capture.

    Two scopes, as CUDA has them (H200, ``tests/fidelity/raw_cuda.py``): a host read of DEVICE memory
    is refused on ANY queue while a capture is open (the global capture mode); a pageable copy is
    refused only on a capturing queue (elsewhere CUDA runs it eagerly).
    """

    def __init__(self, kind_of: Callable[[torch.Tensor], MemoryKind], capturing_here: Callable[[], bool]) -> None:
        super().__init__()
        self._kind_of = kind_of
        self._capturing_here = capturing_here
        #: ``x[mask] = scalar`` passes (raw CUDA runs it as ``masked_fill``); the seam's backends keep
        #: refusing every boolean-mask index inside a capture (their fidelity record, both arms).
        self.allow_scalar_mask_fill = False

    def _reads_device(self, args: tuple[Any, ...]) -> bool:
        return any(self._kind_of(t) == "device" for t in tensors(args))

    def check_global(self, func: Any, args: tuple[Any, ...]) -> None:
        """Raise if ``func(*args)`` is refused while any capture is open, on whatever queue it runs."""
        if func in SYNC_OPS and self._reads_device(args):
            collector.note_unsafe_call(f"{func} (a host read of device memory)")
            raise CaptureSyncError(
                f"{func} while a graph capture is open reads a device value on the host; "
                "move it out of the captured region or keep the value on the device"
            )

    def check_outside(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> None:
        """Raise if ``func(*args, **kwargs)``, issued on a queue OUTSIDE the open capture, is refused."""
        self.check_global(func, args)
        if func in COPY_OPS and self._kind_of(args[1]) == "device" and self._kind_of(args[0]) == "pageable":
            # a copy into pageable host memory waits for its queue on the host, as item() does
            collector.note_unsafe_call(f"{func} (a device-to-pageable copy: a host sync)")
            raise CaptureSyncError(f"{func} from the device into pageable host memory while a graph capture is open "
                                   "waits on the host (global capture mode); copy after the capture closes")
        if self._reads_device((args, kwargs)) and _allocates(func):  # keyword arguments count too (sorter=)
            # CUDA refuses the cudaMalloc such an op needs whenever the caching allocator has no block
            # for that queue (H200: the same program passed or failed with the file order), so the
            # seam refuses it always, on both arms.
            collector.note_unsafe_call(f"{func} (device memory allocated outside the capture)")
            raise CaptureStateError(
                f"{func} on a queue outside the open graph capture allocates device memory: CUDA refuses the "
                "allocation whenever its cache cannot serve it (global capture mode); run it before the capture, "
                "or on the capturing queue, or in place into a buffer made before the capture")

    def check(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> None:
        """Raise if ``func(*args, **kwargs)`` is refused on a capturing queue."""
        self.check_global(func, args)
        if func in MASK_INDEX_OPS and any(t.dtype in (torch.bool, torch.uint8) for t in tensors(args[1:2])) \
                and not (self.allow_scalar_mask_fill and _scalar_fill(func, args)):
            raise CaptureSyncError(
                f"{func} with a boolean mask inside graph capture: the result's shape depends on device data "
                "(a host sync); use torch.where or a fixed-size index instead")
        if func in COPY_OPS:
            blocking = not (args[2] if len(args) > 2 else (kwargs or {}).get("non_blocking", False))
            check_copy(self._kind_of(args[0]), self._kind_of(args[1]), blocking=blocking)

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        if self._capturing_here():
            self.check(func, args, kwargs or {})
        elif collector.any_capture_open():
            # Positional arguments only: on CUDA an allocating op whose device tensor comes only as a
            # keyword has host tensors positionally, and torch's own device check refuses it before
            # any launch, leaving the capture intact (the emulator, which has no such check, reads both).
            self.check_outside(func, args)
        try:
            return func(*args, **(kwargs or {}))
        except RuntimeError as err:  # torch's raw CUDA refusals, said as the seam's errors
            seam_error = translate_cuda_error(err, f"{func}")
            if seam_error is None:
                raise
            raise seam_error from err


#: Raw CUDA refusal text (H200, torch 2.11) -> the seam error class that says the same thing.
_CUDA_REFUSALS: tuple[tuple[str, type[CaptureError], str], ...] = (
    ("cublas_status_not_initialized", CaptureWarmupError,
     "the first cuBLAS use happened inside a capture; run the forward once before capturing (capture_one's warmups)"),
    ("unless the cpu tensor is pinned", PageableCopyError,
     "copy between pageable host memory and the device inside graph capture; stage it through a pinned buffer"),
    ("dependency created on uncaptured work", CaptureDependencyError,
     "a capturing stream waited on work recorded outside the capture; synchronize it before the capture"),
    ("operation not permitted when stream is capturing", CaptureInvalidatedError,
     "CUDA refused it while a capture is open (global capture mode), and the capture is invalidated"),
)


def translate_cuda_error(err: BaseException, call: str) -> CaptureError | None:
    """The seam error for a raw CUDA refusal of ``call`` inside a capture, or ``None`` if it is not one."""
    text = str(err).lower()
    for needle, cls, advice in _CUDA_REFUSALS:
        if needle in text:
            if cls is CaptureInvalidatedError:
                collector.note_unsafe_call(call)
            return cls(f"{call}: {advice} (CUDA: {str(err).splitlines()[0][:160]})")
    return None


#: Tensor methods that read device memory on the host without a visible aten op on the CPU
#: (``.cpu()`` of a CPU tensor dispatches nothing), so they are caught one level up.
class _HostReads:
    """torch's host-read methods, and the function ``torch.Tensor`` holds under one of their names NOW:
    inside ``seam.emulate_cuda()`` ``cpu``/``tolist``/``numpy`` are the emulation's
    (``seam/torch_cuda/tensor_methods.py``), which dispatch to torch-function modes as torch's own do, so
    a ``CudaBackend``'s guard refuses ``x.cpu()`` in a capture on the emulated device as on a GPU."""

    def __init__(self, methods: Iterable[Any]) -> None:
        self._methods = frozenset(methods)
        self._names = frozenset(m.__name__ for m in self._methods)

    def __contains__(self, func: Any) -> bool:
        if func in self._methods:
            return True
        name = getattr(func, "__name__", None)
        return name in self._names and getattr(torch.Tensor, name, None) is func


_HOST_READS = _HostReads({torch.Tensor.cpu, torch.Tensor.tolist, torch.Tensor.numpy, torch.Tensor.__bool__,
                          torch.Tensor.__int__, torch.Tensor.__float__, torch.Tensor.__index__})
_FROM_DATA = frozenset({torch.tensor, torch.as_tensor})
#: Factories that make a fresh tensor on ``device=`` (the CPU when it is not given).
_FACTORIES = frozenset({torch.tensor, torch.as_tensor, torch.zeros, torch.ones, torch.empty, torch.full,
                        torch.arange, torch.rand, torch.randn, torch.randint, torch.linspace, torch.eye})


class HostReadGuard(TorchFunctionMode):
    """While any capture is open: a host read of device memory is refused (``CaptureSyncError``), and
    on a capturing queue ``torch.tensor(data, device=...)`` is refused as the pageable copy it is."""

    def __init__(self, kind_of: Callable[[torch.Tensor], MemoryKind], capturing_here: Callable[[], bool],
                 device_target: Callable[[Any], bool], *, host_factories: bool = False) -> None:
        super().__init__()
        self._kind_of = kind_of
        self._capturing_here = capturing_here
        self._device_target = device_target
        #: CPU emulator only: a factory called WITHOUT ``device=`` makes host memory (as on CUDA, where it
        #: lands on the CPU), so it is made outside the recording instead of as a buffer of the graph.
        self._host_factories = host_factories

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if collector.any_capture_open():
            if func in _HOST_READS and args and isinstance(args[0], torch.Tensor) and self._kind_of(args[0]) == "device":
                name = getattr(func, "__name__", str(func))
                collector.note_unsafe_call(f"Tensor.{name}() (a host read of device memory)")
                raise CaptureSyncError(f"Tensor.{name}() while a graph capture is open reads device memory on the host; "
                                       "read it after the capture (replay, then read) or keep it on the device")
            if func in _FROM_DATA and kwargs.get("device") is not None and self._capturing_here() \
                    and self._device_target(kwargs["device"]):
                raise PageableCopyError(f"torch.{func.__name__}(data, device=...) inside graph capture copies pageable "
                                        "host data to the device; make the tensor before the capture and refresh it "
                                        "in place (PersistentStepInput)")
            # (with a device ``out=`` buffer a factory writes device memory, which CUDA captures)
            if self._host_factories and func in _FACTORIES and kwargs.get("device") is None \
                    and kwargs.get("out") is None:
                with _disable_current_modes():
                    return func(*args, **kwargs)
        return func(*args, **kwargs)


def _scalar_fill(func: Any, args: tuple[Any, ...]) -> bool:
    """``x[mask] = scalar``: torch runs it as ``masked_fill`` (no data-dependent shape, no sync; H200
    ``bool_mask_assignment_of_a_scalar_inside_the_graph_context``)."""
    values = args[2] if len(args) > 2 else None
    return func is not aten.index.Tensor and isinstance(values, torch.Tensor) and values.dim() == 0 \
        and len(args[1]) == 1


def _allocates(func: Any) -> bool:
    """Whether ``func`` returns fresh memory: a tensor result that is no view or written argument (an op
    that also writes an argument, a training batch norm, allocates its new results all the same)."""
    return any(r.alias_info is None and "Tensor" in str(r.type) for r in func._schema.returns)


def check_copy(dst: MemoryKind, src: MemoryKind, *, blocking: bool = False) -> None:
    """Refuse a copy that real CUDA refuses inside capture."""
    if blocking and "device" in (dst, src) and {dst, src} != {"device"} and "pageable" not in (dst, src):
        raise CaptureSyncError(
            "a BLOCKING copy between pinned host memory and the device inside graph capture waits on the host "
            "(CUDA refuses it: H200, tensor.copy_ without non_blocking); pass non_blocking=True or use backend.copy")
    if dst == "device" and src == "pageable":
        raise PageableCopyError(
            "copy from pageable host memory to the device inside graph capture; "
            "stage it through a pinned buffer (backend.alloc_pinned / PersistentStepInput)"
        )
    if src == "device" and dst == "pageable":
        raise CaptureSyncError("device-to-pageable-host copy inside graph capture is a host sync")
