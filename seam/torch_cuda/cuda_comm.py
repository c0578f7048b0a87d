"""``torch.cuda.comm`` (``torch.nn.parallel.comm``) on the emulated device: the ``torch._C`` bindings under it.

``torch.nn.DataParallel`` scatters its inputs with ``comm.scatter`` and gathers the gradients back with
``comm.gather``, on one GPU too (its forward calls the module directly only after the scatter); ``broadcast``,
``broadcast_coalesced`` and the ``out=`` forms copy between a machine's GPUs. A CPU-only torch has none of
``torch._C._broadcast``, ``_broadcast_out``, ``_broadcast_coalesced``, ``_scatter``, ``_scatter_out``, ``_gather``,
``_gather_out`` (every such call, ``DataParallel``'s forward among them, raised AttributeError), and a CUDA build's
would ask a runtime with no device. While the emulation is on (either build) each is torch's C++
(``torch/csrc/cuda/comm.cpp``) written again: the same checks in the same words, the same tensors returned (a chunk
already on its device is a view of the source, not a copy; ``broadcast`` gives the source itself for its own
device), and the copies device work under the device mode, so inside a capture they are recorded and replayed.
As on a CUDA build with NCCL, a broadcast whose tensors NCCL can take goes through ``torch.cuda.nccl`` (one device
here: an in-place broadcast of the source alone, which makes the device's communicator at the process's first
call: ``nccl_direct.py``).

Worked example: ``torch.nn.DataParallel(model.cuda())(x)`` with ``x`` on the device scatters ``x`` into one chunk
(a view of ``x``), runs the model on it and returns its output; the backward gathers the chunk's gradient into a new
device tensor, as on a machine with one GPU.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch
import torch.cuda.nccl
from torch._prims_common import canonicalize_dim, suggest_memory_format
from torch._utils import _flatten_dense_tensors, _flatten_sparse_tensors, _reorder_tensors_as, _take_tensors
from torch._utils import _unflatten_dense_tensors, _unflatten_sparse_tensors

from seam.torch_cuda import nccl_direct
from seam.torch_cuda.cuda_errors import torch_check as _check


# -- broadcast --------------------------------------------------------------------------------------------------
def _broadcast_out_impl(tensor: torch.Tensor, outs: list[torch.Tensor]) -> list[torch.Tensor]:
    """No checks: through NCCL where it takes every tensor (the source first), else a copy into each output."""
    group = [tensor, *outs]
    if torch.cuda.nccl.is_available(group):  # dense contiguous device tensors, one per device
        nccl_direct._nccl_broadcast(group, 0, None, None)
    else:
        for out in outs:
            out.copy_(tensor, non_blocking=True)
    return outs


def _broadcast_out(tensor: torch.Tensor, out_tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    outs = list(out_tensors)
    for i, out in enumerate(outs):
        _check(out.is_cuda, "Expected all output tensors to be CUDA tensors, but output tensor at index "
                            f"{i} has device '{out.device}'")
        _check(out.shape == tensor.shape, "Expected all output tensors to have same shape as the source tensor "
                                          f"{list(tensor.shape)}, but output tensor at index {i} has shape "
                                          f"{list(out.shape)}")
    return _broadcast_out_impl(tensor, outs)


def _broadcast(tensor: torch.Tensor, devices: Sequence[int]) -> list[torch.Tensor]:
    devices = [int(d) for d in devices]
    source = tensor.get_device()
    others = []
    for device in devices:
        _check(device >= 0, f"Expected non-negative device index, but got {device}")
        if device != source:
            others.append(torch.empty(tensor.shape, dtype=tensor.dtype, device=torch.device("cuda", device)))
    _broadcast_out_impl(tensor, others)
    made = iter(others)
    return [next(made) if device != source else tensor for device in devices]


def _broadcast_coalesced(tensors: Sequence[torch.Tensor], devices: Sequence[int], buffer_size: int) -> list[list[Any]]:
    tensors, devices = list(tensors), [int(d) for d in devices]
    _check(all(t.get_device() == devices[0] for t in tensors), f"All tensors must be on devices[0]: {devices[0]}")
    buffer_size = min(buffer_size, 2 ** 31 - 1)  # NCCL's largest count (``nccl::get_max_count``)
    outputs: list[list[Any]] = [list(tensors)] + [[] for _ in devices[1:]]
    kinds = set()
    for chunk in _take_tensors(tensors, buffer_size):
        kinds.add((chunk[0].dtype, chunk[0].layout))
        if chunk[0].is_sparse:
            indices, values = _flatten_sparse_tensors(chunk)
            got_indices, got_values = _broadcast(indices, devices), _broadcast(values, devices)
            for i in range(1, len(devices)):
                outputs[i].extend(t.data for t in _unflatten_sparse_tensors((got_indices[i], got_values[i]), chunk))
        else:
            got = _broadcast(_flatten_dense_tensors(chunk), devices)
            for i in range(1, len(devices)):
                # a fresh version counter for each (NOTE [ Version Counter in comm.*_coalesced ]): ``.data``
                outputs[i].extend(t.data for t in _unflatten_dense_tensors(got[i], chunk))
    if len(kinds) > 1:
        outputs = [list(_reorder_tensors_as(o, tensors)) for o in outputs]
    return outputs


# -- scatter ------------------------------------------------------------------------------------------------------
def _check_stream(streams: Any, i: int, device_index: int) -> Any:
    """The stream given for chunk ``i`` (None where none is), checked against its device."""
    stream = streams[i] if streams is not None and i < len(streams) else None
    if stream is not None:
        _check(stream.device_index == device_index, f"Expected the device associated with the stream at index {i} "
                                                     f"(was {stream.device_index}) to match the device supplied at "
                                                     f"that index (expected {device_index})")
    return stream


class _StreamGuard:
    """``OptionalCUDAStreamGuard``: each ``reset`` makes a stream current; the one before comes back at the end."""

    def __init__(self) -> None:
        self.before: Any = None

    def reset(self, stream: Any) -> None:
        if self.before is None:
            self.before = torch.cuda.current_stream()
        torch.cuda.set_stream(stream)

    def __enter__(self) -> "_StreamGuard":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.before is not None:
            torch.cuda.set_stream(self.before)


def _scatter(tensor: torch.Tensor, devices: Sequence[int], chunk_sizes: Sequence[int] | None, dim: int,
             streams: Any) -> list[torch.Tensor]:
    devices = [int(d) for d in devices]
    _check(len(devices) > 0, "Expected at least one device to scatter to")
    if chunk_sizes is not None:
        _check(len(chunk_sizes) == len(devices), "Expected devices and chunk_sizes to be of same length, but got "
                                                 f"len(devices) = {len(devices)} and len(chunk_sizes) = "
                                                 f"{len(chunk_sizes)}")
    chunks = list(tensor.split_with_sizes(list(chunk_sizes), dim) if chunk_sizes is not None
                  else tensor.chunk(len(devices), dim))
    with _StreamGuard() as guard:
        for i, chunk in enumerate(chunks):
            device_index = devices[i]
            if device_index == tensor.get_device():
                continue  # already there: the chunk is a view of the source
            stream = _check_stream(streams, i, device_index)
            if stream is not None:
                guard.reset(stream)
            _check(device_index >= 0, f"Expected non-negative device index, but got {device_index}")
            chunks[i] = chunk.to(torch.device("cuda", device_index), non_blocking=True, copy=False,
                                 memory_format=torch.preserve_format)
    return chunks


def _scatter_out(tensor: torch.Tensor, out_tensors: Sequence[torch.Tensor], dim: int, streams: Any) -> list[torch.Tensor]:
    outs = list(out_tensors)
    _check(len(outs) > 0, "Expected at least one output tensor to scatter to")
    dim = canonicalize_dim(tensor.dim(), dim)  # at::maybe_wrap_dim, its IndexError in its words
    sizes = []
    for i, out in enumerate(outs):
        _check(out.is_cuda, "Expected all output tensors to be CUDA tensors, but output tensor at index "
                            f"{i} has device '{out.device}'")
        same_ndim = out.dim() == tensor.dim()
        expected = list(out.shape)
        if same_ndim:
            sizes.append(out.shape[dim])
            expected[dim] = tensor.shape[dim]
        _check(same_ndim and expected == list(tensor.shape),
               f"Output tensor at index {i} has incorrect shape: {list(out.shape)}. Expected same shape except "
               f"for scatter dim {dim} as the source tensor: {list(tensor.shape)}")
    _check(sum(sizes) == tensor.shape[dim], f"Total size for output tensors along scatter dim {dim} does not match "
                                            f"the source tensor size at dim {dim}. Expected {tensor.shape[dim]}, "
                                            f"but got total size {sum(sizes)}")
    chunks = tensor.split_with_sizes(sizes, dim)
    with _StreamGuard() as guard:
        for i, chunk in enumerate(chunks):
            stream = _check_stream(streams, i, outs[i].get_device())
            if stream is not None:
                guard.reset(stream)
            outs[i].copy_(chunk, non_blocking=True)
    return outs


# -- gather -------------------------------------------------------------------------------------------------------
def _gathered_shape(tensors: list[torch.Tensor], dim: int, quoted: bool) -> list[int]:
    """The checks both gathers make (each checked first that ``tensors`` is not empty); the gathered shape."""
    expected = list(tensors[0].shape)
    total = 0
    for i, t in enumerate(tensors):
        where = f"'{t.device}'" if quoted else str(t.device)
        _check(t.is_cuda, f"Expected all input tensors to be CUDA tensors, but tensor at index {i} has device {where}")
        _check(t.dim() == len(expected), "Expected all input tensors to have the same number of dimensions, but "
                                         f"tensor at index {i}has {t.dim()} dimensions, (expected {len(expected)})")
        expected[dim] = t.shape[dim]
        _check(list(t.shape) == expected,
               f"Input tensor at index {i} has invalid shape {list(t.shape)}, but expected {expected}")
        total += t.shape[dim]
    expected[dim] = total
    return expected


def _gather_out_impl(tensors: list[torch.Tensor], out: torch.Tensor, dim: int) -> torch.Tensor:
    for piece, t in zip(out.split_with_sizes([t.shape[dim] for t in tensors], dim), tensors):
        piece.copy_(t, non_blocking=out.is_cuda)
    return out


def _gather(tensors: Sequence[torch.Tensor], dim: int, destination_index: int | None) -> torch.Tensor:
    tensors = list(tensors)
    _check(len(tensors) > 0, "Expected at least one tensor to gather from")
    dim = canonicalize_dim(tensors[0].dim(), dim)
    shape = _gathered_shape(tensors, dim, quoted=False)
    fmt = suggest_memory_format(tensors[0])
    if fmt != torch.contiguous_format and any(suggest_memory_format(t) != fmt for t in tensors):
        fmt = torch.contiguous_format
    device = (torch.device("cpu") if destination_index == -1 else
              torch.device("cuda", torch.cuda.current_device() if destination_index is None else destination_index))
    result = torch.empty(shape, dtype=tensors[0].dtype, device=device, memory_format=fmt)
    return _gather_out_impl(tensors, result, dim)


def _gather_out(tensors: Sequence[torch.Tensor], out_tensor: torch.Tensor, dim: int) -> torch.Tensor:
    tensors = list(tensors)
    _check(len(tensors) > 0, "Expected at least one tensor to gather from")
    dim = canonicalize_dim(tensors[0].dim(), dim)
    shape = _gathered_shape(tensors, dim, quoted=True)
    _check(list(out_tensor.shape) == shape,
           f"Expected out tensor to have shape {shape}, but got {list(out_tensor.shape)}")
    return _gather_out_impl(tensors, out_tensor, dim)


_BINDINGS = {"_broadcast": _broadcast, "_broadcast_out": _broadcast_out, "_broadcast_coalesced": _broadcast_coalesced,
             "_scatter": _scatter, "_scatter_out": _scatter_out, "_gather": _gather, "_gather_out": _gather_out}


def patches() -> list[tuple[Any, str, Any]]:
    """``torch._C``'s comm bindings, on either build (a CUDA build's would ask a runtime with no device)."""
    return [(torch._C, name, fn) for name, fn in _BINDINGS.items()]
