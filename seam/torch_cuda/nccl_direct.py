"""``torch.cuda.nccl``'s direct calls on the emulated device: the ``torch._C._nccl_*`` bindings under them.

``torch.cuda.nccl.all_reduce``, ``reduce``, ``broadcast``, ``all_gather`` and ``reduce_scatter`` take a list of
tensors, one per GPU of the machine (``torch.nn.parallel``'s ``comm`` calls them across a process's GPUs), and
``unique_id`` / ``init_rank`` make a communicator by hand. A CPU-only torch has none of the bindings (every call
raised AttributeError, ``is_available`` said False), and a CUDA build's would ask a runtime with no device. While the
emulation is on (on either build):

- each call checks its tensors as torch's C++ does (``torch/csrc/cuda/nccl.cpp``'s ``check_inputs``), in its words;
- the device list's communicators are made at its first call (torch's ``get_communicators``: ``ncclCommInitAll``,
  kept for the process), through the emulated library (``nccl_library.py``), so a first call inside a capture is
  refused as NCCL's initialisation is there and made again at the next call;
- the collective is the emulated library's, on the tensors' device pointers and the current stream (or the streams
  given), inside ``ncclGroupStart``/``ncclGroupEnd`` as torch's ``AutoNcclGroup``: run now, or recorded by the capture
  of that stream and run again at each replay, as NCCL's kernels in a graph are;
- a result other than success is torch's ``RuntimeError("NCCL Error N: <NCCL's words>")``.

The emulated machine has one device, so a list holds one tensor (a second on the same device is refused "inputs must
be on unique devices", as on a GPU machine).

Worked example: ``torch.cuda.nccl.all_reduce([x], [y])`` of device tensors copies ``x`` into ``y`` (a sum over one
rank); inside a capture after a warm-up it is one recorded operation, and each replay copies again.
"""

from __future__ import annotations

import ctypes
import operator
import sys
from typing import Any, Callable, Sequence

import torch

from seam.torch_cuda import nccl_library
from seam.torch_cuda.cuda_errors import torch_check as _check
from seam.torch_cuda.nccl_library import FUNCTIONS, SUCCESS

#: ``NCCL_UNIQUE_ID_BYTES``.
UNIQUE_ID_BYTES = 128
#: The capsule name torch gives a communicator (``python_nccl.cpp``'s ``COMM_CAPSULE_NAME``); kept alive here, as the
#: capsule holds its address.
_CAPSULE_NAME = ctypes.create_string_buffer(b"torch.cuda.nccl.Communicator")
# prototypes of our own: setting ``restype`` on ``ctypes.pythonapi.PyCapsule_New`` would change it for the process
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))

#: ``to_nccl_data_type``: torch's dtype -> ``ncclDataType_t`` (bool and the float8 types travel as bytes).
_DATA_TYPES = {torch.int8: 0, torch.uint8: 1, torch.bool: 1, torch.int32: 2, torch.int64: 4, torch.float16: 6,
               torch.float32: 7, torch.float64: 8, torch.bfloat16: 9}
for _name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"):
    if hasattr(torch, _name):
        _DATA_TYPES[getattr(torch, _name)] = 1
#: The communicators torch made for each device list (``_communicators``): handles of the emulated library.
_COMMUNICATORS: dict[tuple[int, ...], list[int]] = {}


def _checked(result: int) -> None:
    """torch's ``NCCL_CHECK``."""
    if result != SUCCESS:
        raise RuntimeError(f"NCCL Error {result}: {nccl_library.WORDS.get(result, 'unknown result code')}")


def _tensors(obj: Any) -> list[torch.Tensor]:
    """``extract_tensors``: a sequence of tensors."""
    try:
        items = list(obj)
    except TypeError:
        raise TypeError("expected a sequence") from None
    for i, item in enumerate(items):
        if not isinstance(item, torch.Tensor):
            raise TypeError(f"expected Tensor at {i} (got {type(item).__name__})")
    return items


def _check_one(t: torch.Tensor, dtype: torch.dtype) -> None:
    _check(t.is_cuda and not t.is_sparse, "input and output elements have to be cuda dense Tensors")
    _check(t.dtype == dtype, "all inputs and outputs must be of the same Tensor dtype")
    _check(t.is_contiguous(), "all inputs and outputs have to be contiguous")


def _check_inputs(inputs: list[torch.Tensor], outputs: Sequence[torch.Tensor | None], input_multiplier: int,
                  output_multiplier: int) -> None:
    """``check_inputs``: the tensors NCCL can take, an output of the size the collective writes, one per device."""
    _check(len(inputs) != 0, "input sequence can't be empty")
    _check(len(inputs) == len(outputs), "inputs and outputs sequences have to be of the same length, but got "
                                        f"input of length {len(inputs)} and output of length {len(outputs)}")
    numel, dtype = inputs[0].numel(), inputs[0].dtype
    devices: set[int] = set()
    for t, out in zip(inputs, outputs):
        _check_one(t, dtype)
        _check(t.numel() == numel, "all inputs must have the same number of elements")
        if out is not None:
            _check_one(out, dtype)
            _check(t.get_device() == out.get_device(), "input and output must be on the same device")
            _check(out.numel() * output_multiplier == numel * input_multiplier,
                   "output must be of size input_size * size_multiplier")
        _check(t.get_device() not in devices, "inputs must be on unique devices")
        devices.add(t.get_device())


def _data_type(t: torch.Tensor) -> int:
    kind = _DATA_TYPES.get(t.dtype)
    if kind is None:
        # c10 prints the ScalarType's name (ComplexFloat), as the tensor's legacy type name holds it
        raise RuntimeError(f"Unconvertible NCCL type {t.type().rsplit('.', 1)[-1].removesuffix('Tensor')}")
    return kind


def _streams(obj: Any, size: int) -> list[int]:
    """``unpack_streams``: each tensor's stream handle (None: the current stream)."""
    current = torch.cuda.current_stream().cuda_stream
    if obj is None:
        return [current] * size
    given = list(obj)
    if len(given) != size:
        raise RuntimeError("number of streams is not equal to number of inputs")
    return [current if s is None else s.cuda_stream for s in given]


def _comms(obj: Any, size: int, inputs: list[torch.Tensor]) -> list[int]:
    """``unpack_comms``: the communicators given, else the device list's (made at its first call)."""
    if obj is None:
        devices = tuple(t.get_device() for t in inputs)
        if devices not in _COMMUNICATORS:
            _COMMUNICATORS[devices] = _init_all(devices)
        return _COMMUNICATORS[devices]
    given = [obj] if type(obj).__name__ == "PyCapsule" else list(obj)
    handles = [_capsule_pointer(c, ctypes.addressof(_CAPSULE_NAME)) for c in given]
    if len(handles) != size:
        raise RuntimeError("number of communicators is not equal to number of inputs")
    return handles


def _init_all(devices: tuple[int, ...]) -> list[int]:
    """``ncclCommInitAll`` over ``devices``: the emulated machine's one device (``check_inputs`` refused a list of
    two), so one communicator of one rank."""
    comm = ctypes.c_void_p()
    _checked(FUNCTIONS["ncclCommInitRank"](ctypes.byref(comm), len(devices), (ctypes.c_char * UNIQUE_ID_BYTES)(), 0))
    return [int(comm.value or 0)]


def _grouped(calls: Callable[[], None]) -> None:
    """torch's ``AutoNcclGroup`` around the per-device calls."""
    _checked(FUNCTIONS["ncclGroupStart"]())
    try:
        calls()
    finally:
        _checked(FUNCTIONS["ncclGroupEnd"]())


def _each(inputs: list[torch.Tensor], streams: Any, comms: Any, call: Callable[[int, int, int], int]) -> None:
    """``call(i, comm, stream)`` for each tensor, in one group; each result checked."""
    handles = _comms(comms, len(inputs), inputs)
    stream_handles = _streams(streams, len(inputs))
    _grouped(lambda: [_checked(call(i, handles[i], stream_handles[i])) for i in range(len(inputs))])


def _nccl_all_reduce(inputs: Any, outputs: Any, op: int, streams: Any, comms: Any) -> None:
    inputs, outputs = _tensors(inputs), _tensors(outputs)
    _check_inputs(inputs, outputs, 1, 1)
    kind, count = _data_type(inputs[0]), inputs[0].numel()
    _each(inputs, streams, comms, lambda i, comm, stream: FUNCTIONS["ncclAllReduce"](
        inputs[i].data_ptr(), outputs[i].data_ptr(), count, kind, int(op), comm, stream))


def _nccl_reduce(inputs: Any, output: torch.Tensor, root: int, op: int, streams: Any, comms: Any) -> None:
    inputs = _tensors(inputs)
    _check(0 <= root < len(inputs), "invalid root")
    _check_inputs(inputs, [output if i == root else None for i in range(len(inputs))], 1, 1)
    kind, count = _data_type(inputs[0]), inputs[0].numel()
    _each(inputs, streams, comms, lambda i, comm, stream: FUNCTIONS["ncclReduce"](
        inputs[i].data_ptr(), output.data_ptr() if i == root else None, count, kind, int(op), int(root), comm, stream))


def _nccl_broadcast(inputs: Any, root: int, streams: Any, comms: Any) -> None:
    inputs = _tensors(inputs)
    _check(0 <= root < len(inputs), "invalid root")
    _check_inputs(inputs, inputs, 1, 1)
    kind, count = _data_type(inputs[0]), inputs[0].numel()
    _each(inputs, streams, comms, lambda i, comm, stream: FUNCTIONS["ncclBcast"](
        inputs[i].data_ptr(), count, kind, int(root), comm, stream))


def _nccl_all_gather(inputs: Any, outputs: Any, streams: Any, comms: Any) -> None:
    inputs, outputs = _tensors(inputs), _tensors(outputs)
    _check_inputs(inputs, outputs, len(inputs), 1)
    kind, count = _data_type(inputs[0]), inputs[0].numel()
    _each(inputs, streams, comms, lambda i, comm, stream: FUNCTIONS["ncclAllGather"](
        inputs[i].data_ptr(), outputs[i].data_ptr(), count, kind, comm, stream))


def _nccl_reduce_scatter(inputs: Any, outputs: Any, op: int, streams: Any, comms: Any) -> None:
    inputs, outputs = _tensors(inputs), _tensors(outputs)
    _check_inputs(inputs, outputs, 1, len(inputs))
    kind, count = _data_type(inputs[0]), inputs[0].numel() // len(inputs)
    _each(inputs, streams, comms, lambda i, comm, stream: FUNCTIONS["ncclReduceScatter"](
        inputs[i].data_ptr(), outputs[i].data_ptr(), count, kind, int(op), comm, stream))


def _nccl_unique_id() -> bytes:
    uid = (ctypes.c_char * UNIQUE_ID_BYTES)()
    _checked(FUNCTIONS["ncclGetUniqueId"](ctypes.byref(uid)))
    return bytes(uid)


#: torch parses ``_nccl_init_rank``'s arguments with ``"is#i"`` in a file that does not define ``PY_SSIZE_T_CLEAN``,
#: and Python 3.10 to 3.12 refuse a '#' format then, after the int before it: every call raises SystemError (H100,
#: torch 2.11.0+cu130, Python 3.12, session 42). Python 3.13 no longer asks for the macro.
_REFUSES_HASH_FORMATS = (3, 10) <= sys.version_info[:2] < (3, 13)


def _nccl_init_rank(nranks: int, unique_id: bytes, rank: int) -> Any:
    operator.index(nranks)  # the "i" before the "s#"
    if _REFUSES_HASH_FORMATS:
        raise SystemError("PY_SSIZE_T_CLEAN macro must be defined for '#' formats")
    _check(len(unique_id) == UNIQUE_ID_BYTES,
           f"invalid unique_id (expected {UNIQUE_ID_BYTES} bytes, got {len(unique_id)})")
    uid = (ctypes.c_char * UNIQUE_ID_BYTES).from_buffer_copy(unique_id)
    comm = ctypes.c_void_p()
    _checked(FUNCTIONS["ncclCommInitRank"](ctypes.byref(comm), int(nranks), uid, int(rank)))
    return _capsule_new(comm.value, ctypes.addressof(_CAPSULE_NAME), None)


_BINDINGS = {"_nccl_all_reduce": _nccl_all_reduce, "_nccl_reduce": _nccl_reduce, "_nccl_broadcast": _nccl_broadcast,
             "_nccl_all_gather": _nccl_all_gather, "_nccl_reduce_scatter": _nccl_reduce_scatter,
             "_nccl_unique_id": _nccl_unique_id, "_nccl_init_rank": _nccl_init_rank}


def patches() -> list[tuple[Any, str, Any]]:
    """``torch._C``'s direct NCCL bindings, on either build (a CUDA build's would ask a runtime with no device)."""
    return [(torch._C, name, fn) for name, fn in _BINDINGS.items()]


def forget() -> None:
    """Leaving the emulation: the device lists' communicators (the library's, let go with it) are forgotten."""
    _COMMUNICATORS.clear()
