"""What a CPU tensor says about itself under the emulated ``torch.cuda``: the Tensor methods that
never reach torch's dispatcher, or refuse "cuda" before it.

``x.device``, ``x.is_cuda`` and ``x.get_device()`` answer from the memory kind of ``x``'s storage
(``seam.torch_cuda.kinds``). ``to``/``cuda``/``cpu`` turn a move between devices into one
``aten._to_copy`` with a ``device=`` the device mode understands (so a copy inside a capture is
checked and recorded like any other operation), and return the tensor itself where torch does (a
device tensor moved to the device). ``pin_memory``/``is_pinned``/``numpy``/``tolist`` follow the
kind too, and a deep copy of a device tensor is device memory. Each is a plain function; ``install``
sets them on ``torch.Tensor`` and restores torch's.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import torch
from torch.overrides import handle_torch_function, has_torch_function_unary

from seam.torch_cuda import graph_trees, in_flight, sync_debug
from seam.torch_cuda.device import check_index
from seam.torch_cuda.kinds import is_device, kind_of, mark
from seam.torch_cuda.runtime import CPU, DEVICE, runtime

_TensorBase = torch._C.TensorBase
_base_device = _TensorBase.device.__get__  # type: ignore[attr-defined]
_base_to = _TensorBase.to
_base_tolist = _TensorBase.tolist
_base_numpy = _TensorBase.numpy
_to_copy = torch.ops.aten._to_copy.default
_FAKE = torch._C._TorchDispatchModeKey.FAKE
_orig_tensor = torch.tensor
_orig_as_tensor = torch.as_tensor
_base_new_tensor = _TensorBase.new_tensor
_base_deepcopy = torch.Tensor.__deepcopy__


def device(self: torch.Tensor) -> torch.device:
    return DEVICE if is_device(self) else _base_device(self)


def is_cuda(self: torch.Tensor) -> bool:
    return is_device(self)


def get_device(self: torch.Tensor) -> int:
    return 0 if is_device(self) else -1


def _target(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[torch.device | None, torch.dtype | None, bool, Any]:
    """``Tensor.to``'s arguments: (device, dtype, non_blocking, memory_format), ``to(other)`` included."""
    if args and isinstance(args[0], torch.Tensor):
        other = args[0]
        return (DEVICE if is_device(other) else _base_device(other)), other.dtype, \
            bool(args[1] if len(args) > 1 else kwargs.get("non_blocking", False)), kwargs.get("memory_format")
    dev, dtype, non_blocking, memory_format = torch._C._nn._parse_to(*args, **kwargs)
    return dev, dtype, non_blocking, memory_format


def to(self: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
    copy = bool(kwargs.pop("copy", False))
    dev, dtype, non_blocking, memory_format = _target(args, kwargs)
    here = is_device(self)
    there = here if dev is None else dev.type == "cuda"
    if dev is not None and dev.type not in ("cuda", "cpu"):
        return _base_to(self, *args, **kwargs)
    if not here and not there:
        return _base_to(self, *args, copy=copy, **kwargs) if args or kwargs else self
    if there and dev is not None:
        check_index(dev)  # a device the machine lacks: CUDA's "invalid device ordinal", as every device query says it
    same_dtype = dtype is None or dtype == self.dtype
    if here == there and same_dtype and not copy and memory_format in (None, torch.preserve_format):
        return self
    extra: dict[str, Any] = {} if memory_format is None else {"memory_format": memory_format}
    if here and not there and non_blocking:
        extra["pin_memory"] = True  # torch stages a non-blocking device-to-host copy in pinned memory
    if there:
        return _to_copy(self, dtype=dtype or self.dtype, device=DEVICE, non_blocking=non_blocking, **extra)
    with host_copy():
        return _to_copy(self, dtype=dtype or self.dtype, device=CPU, non_blocking=non_blocking, **extra)


@contextlib.contextmanager
def host_copy() -> Iterator[None]:
    """Say that the ``_to_copy`` to the CPU made inside is a copy to host memory that the caller asked for
    (``dispatch.DeviceMode`` keeps any other on the device: torch's C++ converting with the tensor's options)."""
    per_thread = runtime().per_thread
    before, per_thread.host_copy = per_thread.host_copy, True
    try:
        yield
    finally:
        per_thread.host_copy = before


def type_as(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """``Tensor.type_as``: ``self.to(other)``'s device and dtype (torch's C++ passes ``other``'s options)."""
    return to(self, other)


def cuda(self: torch.Tensor, device: Any = None, non_blocking: bool = False, **kwargs: Any) -> torch.Tensor:
    """``Tensor.cuda(device)``: an index (or ``cuda:N``) past the one device is refused as ``to`` refuses it."""
    target = DEVICE if device is None else torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
    return to(self, target, non_blocking=non_blocking, **kwargs)


def cpu(self: torch.Tensor, memory_format: Any = torch.preserve_format) -> torch.Tensor:
    if has_torch_function_unary(self):  # as torch's own method: a torch-function mode sees the call (the
        # seam's host-read guard, seam/capture_guard.py, refuses it in a capture on a GPU)
        return handle_torch_function(cpu, (self,), self, memory_format=memory_format)
    return to(self, CPU, memory_format=memory_format) if is_device(self) else self


def pin_memory(self: torch.Tensor, device: Any = None) -> torch.Tensor:
    if is_device(self):
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if kind_of(self) == "pinned":
        return self
    pinned = self.clone()
    mark(pinned, "pinned")
    return pinned


def is_pinned(self: torch.Tensor, device: Any = None) -> bool:
    return kind_of(self) == "pinned"


def numpy(self: torch.Tensor, *, force: bool = False) -> Any:
    if has_torch_function_unary(self):  # as torch's own method (``cpu``)
        return handle_torch_function(numpy, (self,), self, force=force)
    if is_device(self):
        if not force:
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                            "to host memory first.")
        return _base_numpy(cpu(self), force=True)
    return _base_numpy(self, force=force)


def tolist(self: torch.Tensor) -> Any:
    if has_torch_function_unary(self):  # as torch's own method (``cpu``)
        return handle_torch_function(tolist, (self,), self)
    if is_device(self) and runtime().captures:
        # A device-to-pageable copy first: torch refuses it on the capturing stream (H200: ``tolist``),
        # and CUDA's global mode refuses it elsewhere.
        return _base_tolist(cpu(self))
    if is_device(self):
        sync_debug.flag()  # torch's C++ copies to the host, a blocking copy (H100, session 22)
    in_flight.settle(runtime())  # torch reads the memory itself, with no tensor operation
    return _base_tolist(self)


def type_(self: torch.Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    if getattr(dtype, "is_cuda", False) is True and isinstance(getattr(dtype, "__name__", None), str):
        dtype = f"torch.cuda.{dtype.__name__}"  # ``torch.cuda.DoubleTensor`` (``legacy_types.py``): by its name
    if dtype is None:
        name = _TensorBase.type(self)
        return name.replace("torch.", "torch.cuda.", 1) if is_device(self) else name
    if isinstance(dtype, str) and dtype.startswith("torch.cuda."):
        host = _TensorBase.type(self if not is_device(self) else self, dtype.replace("torch.cuda.", "torch.", 1))
        return to(host, DEVICE, non_blocking=non_blocking)
    if isinstance(dtype, str) and is_device(self):  # a CPU tensor type: the copy leaves the device
        with host_copy():
            return _TensorBase.type(self, dtype, non_blocking, **kwargs)
    return _TensorBase.type(self, dtype, non_blocking, **kwargs)


def new_tensor(self: torch.Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, **kwargs: Any) -> torch.Tensor:
    target = device if device is not None else (DEVICE if is_device(self) else None)
    if target is not None and _on_device(target):
        return tensor(data, dtype=dtype or self.dtype, device=DEVICE, requires_grad=requires_grad)
    return _base_new_tensor(self, data, dtype=dtype, device=device, requires_grad=requires_grad, **kwargs)


def deepcopy(self: torch.Tensor, memo: dict[int, Any]) -> torch.Tensor:
    """``copy.deepcopy`` of a tensor: a copy of device memory is device memory.

    torch's ``Tensor.__deepcopy__`` clones the STORAGE (``UntypedStorage.clone``: no aten operation, so
    the device mode never sees it) and sets a fresh tensor on the copy: without the mark, a deep-copied
    device tensor (a reference model's buffers) would be host memory. Only deep copies are marked: the
    emulator's own storage clones (a capture's saved bytes) stay unmarked. A pinned tensor's copy is
    pageable, as torch's is.
    """
    in_flight.settle(runtime())  # the storage's clone is no tensor operation
    copied = _base_deepcopy(self, memo)
    if isinstance(copied, torch.Tensor) and is_device(self) and kind_of(copied) == "pageable":
        mark(copied, "device")
    return copied


def _printing(base: Any) -> Any:
    """``repr``/``str`` of a device tensor reads it on the host (torch prints with every mode off, so
    the device mode never sees the reads): refused inside a capture, as the GPU refuses them."""
    def show(self: torch.Tensor, *args: Any, **kwargs: Any) -> str:
        if graph_trees.MARKED:
            graph_trees.refuse_overwritten((self,))
        if is_device(self) and runtime().captures:
            from seam.torch_cuda.streams import refuse_host_wait

            rt = runtime()
            refuse_host_wait("printing a device tensor", capturing_stream=rt.capture_of(rt.current_stream()._id) is not None)
        if is_device(self):
            sync_debug.flag()  # torch's printing reads the values on the host (H100: flagged, several times)
        in_flight.settle(runtime())
        return base(self, *args, **kwargs)
    return show


def record_stream(self: torch.Tensor, stream: Any) -> None:
    from seam.torch_cuda.streams import record_stream as note

    note(self, stream)


def faking() -> bool:
    """A FakeTensorMode is on (torch.compile tracing): its tensors model any device on meta storage, a CUDA
    one too, and it makes them from torch's own functions given ``device="cuda"`` as on a GPU build."""
    return torch._C._get_dispatch_mode(_FAKE) is not None


def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> torch.Tensor:
    """``torch.tensor``: data goes to the device as a pageable host-to-device copy (refused in capture)."""
    if faking():
        return _orig_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad, pin_memory=pin_memory)
    host = _orig_tensor(data, dtype=dtype, device=None if device is None or _on_device(device) else device)
    if pin_memory:
        mark(host, "pinned")
    out = to(host, DEVICE) if device is not None and _on_device(device) else host
    return out.requires_grad_(requires_grad) if requires_grad else out


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> torch.Tensor:
    if faking():
        return _orig_as_tensor(data, dtype=dtype, device=device)
    if isinstance(data, torch.Tensor):
        return to(data, device=device, dtype=dtype) if (device is not None or dtype is not None) else data
    if device is not None and _on_device(device):
        return to(_orig_as_tensor(data, dtype=dtype), DEVICE)
    return _orig_as_tensor(data, dtype=dtype, device=device)


def _on_device(device: Any) -> bool:
    if isinstance(device, int):
        return True
    return torch.device(device).type == "cuda"


#: (owner, attribute name, replacement) for every Tensor method above.
TENSOR_PATCHES: list[tuple[Any, str, Any]] = [
    (torch.Tensor, "device", property(device)),
    (torch.Tensor, "is_cuda", property(is_cuda)),
    (torch.Tensor, "get_device", get_device),
    (torch.Tensor, "to", to),
    (torch.Tensor, "type_as", type_as),
    (torch.Tensor, "cuda", cuda),
    (torch.Tensor, "cpu", cpu),
    (torch.Tensor, "pin_memory", pin_memory),
    (torch.Tensor, "is_pinned", is_pinned),
    (torch.Tensor, "numpy", numpy),
    (torch.Tensor, "tolist", tolist),
    (torch.Tensor, "type", type_),
    (torch.Tensor, "record_stream", record_stream),
    (torch.Tensor, "new_tensor", new_tensor),
    (torch.Tensor, "__repr__", _printing(torch.Tensor.__repr__)),
    (torch.Tensor, "__format__", _printing(torch.Tensor.__format__)),
    (torch.Tensor, "__deepcopy__", deepcopy),
    (torch, "tensor", tensor),
    (torch, "as_tensor", as_tensor),
]

