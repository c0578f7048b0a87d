"""NCCL's own library (``libnccl.so.2``) through ``ctypes``, on the emulated device.

vLLM's ``PyNcclCommunicator`` and SGLang's pynccl do not go through ``torch.distributed`` inside their CUDA graphs:
they load ``libnccl.so.2`` with ``ctypes`` and call NCCL's C API with raw device pointers and a ``cudaStream_t``
(``ncclGetUniqueId``, ``ncclCommInitRank``, ``ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm,
stream)``), since NCCL's kernels on a capturing stream are recorded into the graph and every replay runs the
collective again. A CPU machine has no such library, so under the emulation the communicator was disabled ("Failed
to load NCCL library") and the graph held no collective. While the emulation is on, ``ctypes.CDLL("libnccl.so.2")``
(any folder, ``find_library("nccl")`` too) gives this library (``shared_libraries.py``):

- ``ncclGetVersion`` says the NCCL of the torch it runs on (``nccl.version_tuple``, as ``torch.cuda.nccl.version()``
  does), ``ncclGetErrorString`` NCCL's words for each result.
- A communicator is a Gloo backend (``ProcessGroupGloo``) of its ranks: the device's memory is the host's. Rank 0's
  ``ncclGetUniqueId`` starts a ``TCPStore`` on this machine and writes where it listens into the id (a magic, its
  port, a nonce for this communicator), which the program hands to the other ranks as it would hand NCCL's id; each
  rank's ``ncclCommInitRank`` meets the others there, so ranks in several processes reduce each other's values as
  NCCL's would. A communicator of one rank needs no store.
- The collectives (``ncclAllReduce``, ``ncclBroadcast``, ``ncclBcast``, ``ncclReduce``, ``ncclAllGather``,
  ``ncclReduceScatter``, ``ncclSend``, ``ncclRecv``) read and write the device memory a pointer names: the storage
  that holds it (``addresses.memory_at``: a view's pointer inside a block too), at the pointer's offset, as
  ``count`` elements of the datatype. Average is a sum divided by the ranks (integers truncated, as C divides).
  Between ``ncclGroupStart`` and ``ncclGroupEnd`` (per thread, nested) the operations wait for the group's end, then
  all start before any is waited for (a send and its receive in one group meet).
- On a stream that a capture records (``stream``: the ``cudaStream_t`` given; 0 the legacy default stream), the
  operation, or the group at its end, is one operation of the capture (``collectives.record``), run once now and
  again at each replay on the captured memory, as NCCL's kernels in a graph are.
- ``ncclCommWindowRegister`` / ``Deregister`` (symmetric memory) succeed and change nothing; the communicator's
  queries (``ncclCommCount``, ``ncclCommUserRank``, ``ncclCommCuDevice``, ``ncclCommGetAsyncError``) answer. Any
  other function answers ``ncclInvalidUsage``; no binding sees a missing symbol.

What a capture refuses, as the H100 refused it: ``ncclCommInitRank`` while a global capture, or a thread_local one
of this thread, is open answers ``ncclUnhandledCudaError`` and invalidates the capture (NCCL allocates and waits).
A communicator of one rank does nothing for a call in place (``sendbuff == recvbuff``; a floating average aside), as
NCCL's one-rank path: it reads no memory and a capture records nothing (the H100's capture of it is empty).

Where it differs from a GPU: a pointer that names no device memory answers ``ncclInvalidArgument`` at the call (NCCL
takes any pointer: pinned host memory works on a GPU, pageable faults in its kernel); a first collective that
connects a channel lazily is not refused; NCCL's own streams and its asynchronous errors are not modelled.
"""

from __future__ import annotations

import ctypes
import datetime
import os
import struct
import threading
from typing import Any, Callable

import torch
from torch.utils._python_dispatch import _disable_current_modes

from seam.torch_cuda import addresses, collectives, nccl
from seam.torch_cuda.runtime import new_handle, runtime
from seam.torch_cuda.shared_libraries import Library, address_of, set_address, target, value_of

SUCCESS, UNHANDLED_CUDA_ERROR, SYSTEM_ERROR, INTERNAL_ERROR, INVALID_ARGUMENT, INVALID_USAGE = 0, 1, 2, 3, 4, 5
#: ``ncclGetErrorString``'s words (NCCL's ``src/init.cc``).
WORDS = {0: "no error", 1: "unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
         2: "unhandled system error (run with NCCL_DEBUG=INFO for details)",
         3: "internal error - please report this issue to the NCCL developers",
         4: "invalid argument (run with NCCL_DEBUG=WARN for details)",
         5: "invalid usage (run with NCCL_DEBUG=WARN for details)",
         6: "remote process exited or there was a network error", 7: "NCCL operation in progress"}
#: ``ncclDataType_t``.
DTYPES = {0: torch.int8, 1: torch.uint8, 2: torch.int32, 3: torch.uint32, 4: torch.int64, 5: torch.uint64,
          6: torch.float16, 7: torch.float32, 8: torch.float64, 9: torch.bfloat16, 10: torch.float8_e4m3fn,
          11: torch.float8_e5m2}
#: ``ncclRedOp_t`` -> Gloo's reduction; 4 (``ncclAvg``) is a sum, divided after.
_SUM, _PROD, _MAX, _MIN, _AVG = 0, 1, 2, 3, 4
_REDUCTIONS = {_SUM: "SUM", _PROD: "PRODUCT", _MAX: "MAX", _MIN: "MIN", _AVG: "SUM"}
#: What a unique id of this library starts with; then the store's port and this communicator's nonce.
MAGIC = b"seamgate-nccl\0"
_HOST = "127.0.0.1"
_TIMEOUT = datetime.timedelta(minutes=10)


class _Comm:
    """One communicator: its rank, its size and the Gloo backend that carries its collectives."""

    def __init__(self, backend: Any, rank: int, size: int) -> None:
        self.backend, self.rank, self.size = backend, rank, size


#: Live communicators by the handle ``ncclCommInitRank`` wrote.
_COMMS: dict[int, _Comm] = {}
#: The store rank 0's ``ncclGetUniqueId`` started (one per process, each id a nonce of its own).
_SERVER: list[Any] = []


class _GroupState(threading.local):
    """Per thread: how deep in ``ncclGroupStart`` it is, and the operations that wait for the group's end."""

    def __init__(self) -> None:
        self.depth = 0
        self.queued: list[tuple[list[tuple[Callable[..., Finish], list[torch.Tensor]]], Any]] = []


_GROUPS = _GroupState()


# -- the library's answers ---------------------------------------------------------------------------------------
def _version(out: Any) -> int:
    major, minor, patch = nccl.version_tuple()
    target(out).value = major * 10000 + minor * 100 + patch  # NCCL_VERSION_CODE since 2.9
    return SUCCESS


def _error_string(result: Any) -> bytes:
    return WORDS.get(value_of(result), "unknown result code").encode()


def _unique_id(out: Any) -> int:
    import torch.distributed as dist
    if not _SERVER:
        _SERVER.append(dist.TCPStore(_HOST, 0, is_master=True, wait_for_workers=False, timeout=_TIMEOUT))
    data = MAGIC + struct.pack("<H", _SERVER[0].port) + os.urandom(16)
    place = target(out)
    ctypes.memset(ctypes.addressof(place), 0, ctypes.sizeof(place))
    ctypes.memmove(ctypes.addressof(place), data, len(data))
    return SUCCESS


def _init_rank(out: Any, nranks: Any, unique_id: Any, rank: Any) -> int:
    import torch.distributed as dist
    from torch._C._distributed_c10d import ProcessGroupGloo
    size, rank = value_of(nranks), value_of(rank)
    if size < 1 or not 0 <= rank < size:
        return INVALID_ARGUMENT
    refusing = runtime().refusing_captures()
    if refusing:
        # NCCL allocates device memory and waits for the device as it makes a communicator: inside a capture CUDA
        # refuses that and the capture's end says so (H100, session 37)
        for capture in refusing:
            capture.invalidate("ncclCommInitRank inside a capture (NCCL allocates device memory and waits)")
        return UNHANDLED_CUDA_ERROR
    data = bytes(target(unique_id))
    if size == 1:
        store: Any = dist.HashStore()
    elif not data.startswith(MAGIC):
        return INVALID_ARGUMENT  # not an id of this library's ncclGetUniqueId
    else:
        port = struct.unpack_from("<H", data, len(MAGIC))[0]
        nonce = data[len(MAGIC) + 2:len(MAGIC) + 18].hex()
        server = _SERVER[0] if _SERVER and _SERVER[0].port == port else None
        store = dist.PrefixStore(f"seamgate-nccl/{nonce}", server if server is not None else
                                 dist.TCPStore(_HOST, port, is_master=False, timeout=_TIMEOUT))
    try:
        backend = ProcessGroupGloo(store, rank, size, _TIMEOUT)
    except RuntimeError:
        return SYSTEM_ERROR
    handle = new_handle()
    _COMMS[handle] = _Comm(backend, rank, size)
    set_address(out, handle)
    return SUCCESS


def _comm(handle: Any) -> _Comm | None:
    address = address_of(handle)
    return None if address is None else _COMMS.get(address)


def _destroy(handle: Any) -> int:
    address = address_of(handle)
    return SUCCESS if address is not None and _COMMS.pop(address, None) is not None else INVALID_ARGUMENT


def _query(read: Callable[[_Comm], int]) -> Callable[[Any, Any], int]:
    def answer(handle: Any, out: Any) -> int:
        comm = _comm(handle)
        if comm is None:
            return INVALID_ARGUMENT
        target(out).value = read(comm)
        return SUCCESS
    return answer


def _window_register(handle: Any, buffer: Any, size: Any, window: Any, flags: Any = 0) -> int:
    if _comm(handle) is None:
        return INVALID_ARGUMENT
    set_address(window, new_handle())
    return SUCCESS


def _window_deregister(handle: Any, window: Any) -> int:
    return SUCCESS if _comm(handle) is not None else INVALID_ARGUMENT


# -- the memory a pointer names ----------------------------------------------------------------------------------
def _view(pointer: Any, count: int, dtype: torch.dtype) -> torch.Tensor | None:
    """``count`` elements of ``dtype`` at the device pointer ``pointer``: a tensor over the memory that holds them,
    None where no device memory does."""
    address = address_of(pointer)
    itemsize = dtype.itemsize
    found = None if address is None else addresses.memory_at(address, count * itemsize)
    if found is None or found[1] % itemsize:
        return None
    storage, offset = found
    with _disable_current_modes():
        return torch.empty(0, dtype=dtype).set_(storage, offset // itemsize, (count,))


# -- the operations: each starts its work on the backend and gives back what finishes it ---------------------------
Finish = Callable[[], None]


def _reduction(op: int) -> Any:
    import torch.distributed as dist
    return getattr(dist.ReduceOp, _REDUCTIONS[op])


def _averaged(comm: _Comm, op: int, t: torch.Tensor) -> None:
    if op != _AVG:
        return
    if t.is_floating_point():
        t.div_(comm.size)
    else:
        t.copy_(torch.div(t, comm.size, rounding_mode="trunc"))


def _all_reduced(comm: _Comm, op: int, t: torch.Tensor) -> Any:
    """Gloo's all-reduce of ``t`` in place, started (an average's division comes after its wait: ``_averaged``)."""
    from torch.distributed import AllreduceOptions
    options = AllreduceOptions()
    options.reduceOp = _reduction(op)
    return comm.backend.allreduce([t], options)


def _all_reduce(comm: _Comm, op: int) -> Callable[..., Finish]:
    def start(send: torch.Tensor, recv: torch.Tensor) -> Finish:
        if addresses.real_tensor_ptr(send) != addresses.real_tensor_ptr(recv):
            recv.copy_(send)
        work = _all_reduced(comm, op, recv)
        return lambda: (work.wait(), _averaged(comm, op, recv))
    return start


def _broadcast(comm: _Comm, root: int) -> Callable[..., Finish]:
    def start(send: torch.Tensor, recv: torch.Tensor) -> Finish:
        from torch.distributed import BroadcastOptions
        if comm.rank == root and addresses.real_tensor_ptr(send) != addresses.real_tensor_ptr(recv):
            recv.copy_(send)
        options = BroadcastOptions()
        options.rootRank = root
        work = comm.backend.broadcast([recv], options)
        return work.wait
    return start


def _reduce(comm: _Comm, op: int, root: int) -> Callable[..., Finish]:
    def start(send: torch.Tensor, recv: torch.Tensor | None = None) -> Finish:
        from torch.distributed import ReduceOptions
        held = send.clone()
        options = ReduceOptions()
        options.reduceOp, options.rootRank = _reduction(op), root
        work = comm.backend.reduce([held], options)

        def finish() -> None:
            work.wait()
            if comm.rank == root and recv is not None:
                _averaged(comm, op, held)
                recv.copy_(held)
        return finish
    return start


def _all_gather(comm: _Comm) -> Callable[..., Finish]:
    def start(send: torch.Tensor, recv: torch.Tensor) -> Finish:
        work = comm.backend.allgather([list(recv.chunk(comm.size))], [send.clone()])
        return work.wait
    return start


def _reduce_scatter(comm: _Comm, op: int) -> Callable[..., Finish]:
    def start(send: torch.Tensor, recv: torch.Tensor) -> Finish:
        held = send.clone()
        work = _all_reduced(comm, op, held)

        def finish() -> None:
            work.wait()
            _averaged(comm, op, held)
            recv.copy_(held.chunk(comm.size)[comm.rank])
        return finish
    return start


def _send(comm: _Comm, peer: int) -> Callable[..., Finish]:
    def start(buffer: torch.Tensor) -> Finish:
        return comm.backend.send([buffer], peer, 0).wait
    return start


def _recv(comm: _Comm, peer: int) -> Callable[..., Finish]:
    def start(buffer: torch.Tensor) -> Finish:
        return comm.backend.recv([buffer], peer, 0).wait
    return start


class _Steps:
    """Operations of the library as one unit (a call, or a group's calls): all start, then all finish. In a capture
    it is the recorded operation's call (``collectives.record``): ``run`` is given the captured memory."""

    def __init__(self, steps: list[tuple[Callable[..., Finish], list[torch.Tensor]]]) -> None:
        self.starts = [start for start, _ in steps]
        self.counts = [len(tensors) for _, tensors in steps]
        self.held: list[torch.Tensor] = [t for _, tensors in steps for t in tensors]

    def tensors(self) -> list[torch.Tensor]:
        return list(self.held)

    def let_go(self) -> None:
        self.held = []

    def run(self, tensors: list[torch.Tensor]) -> None:
        with _disable_current_modes():
            finishes, at = [], 0
            for start, count in zip(self.starts, self.counts):
                finishes.append(start(*tensors[at:at + count]))
                at += count
            for finish in finishes:
                finish()


def _submit(steps: list[tuple[Callable[..., Finish], list[torch.Tensor]]], stream: Any) -> None:
    """Run ``steps`` on ``stream``: now, or recorded by the capture that records the stream."""
    from seam.torch_cuda.streams import Stream, stream as on_stream
    rt = runtime()
    s = Stream.of_handle(address_of(stream))
    capture = rt.capture_of(s._id)
    unit = _Steps(steps)
    if capture is None:
        unit.run(unit.tensors())
        return
    with on_stream(s):
        collectives.record(capture, unit)


def _operation(make: Callable[..., Callable[..., Finish]], buffers: Callable[..., tuple[list[tuple[Any, int]], int]],
               *, op_at: int | None = None, rank_at: int | None = None) -> Callable[..., int]:
    """An NCCL collective or point-to-point call, whose last two arguments are the communicator and the stream:
    ``buffers(comm, *args)`` gives the pointers it names with their element counts and the place of its datatype,
    ``make(comm, *integers after the datatype)`` its start. Of those integers, ``op_at`` is a reduction and
    ``rank_at`` a root or peer: NCCL refuses an unknown one, or one out of range."""
    def call(*args: Any) -> int:
        *rest, handle, stream = args
        comm = _comm(handle)
        if comm is None:
            return INVALID_ARGUMENT
        spans, dtype_at = buffers(comm, *rest)
        dtype = DTYPES.get(value_of(rest[dtype_at]))
        if dtype is None:
            return INVALID_ARGUMENT
        ints = [value_of(a) for a in rest[dtype_at + 1:]]
        if op_at is not None and ints[op_at] not in _REDUCTIONS:
            return INVALID_ARGUMENT
        if rank_at is not None and not 0 <= ints[rank_at] < comm.size:
            return INVALID_ARGUMENT
        if all(count == 0 for _, count in spans):
            # nothing to move: NCCL returns at once, its pointers unread (an empty tensor's data_ptr() is NULL)
            return SUCCESS
        start = make(comm, *ints)
        scaled = op_at is not None and ints[op_at] == _AVG and dtype.is_floating_point
        if comm.size == 1 and len(spans) == 2 and len({address_of(p) for p, _ in spans}) == 1 and not scaled:
            # NCCL's one-rank path: in place there is nothing to do, and nothing is launched or recorded (a floating
            # average is a scaling kernel); the memory is never read (H100, session 37: a capture of it is empty)
            return SUCCESS
        tensors = []
        for pointer, count in spans:
            view = _view(pointer, count, dtype)
            if view is None:
                return INVALID_ARGUMENT
            tensors.append(view)
        if any(t.numel() == 0 for t in tensors):
            return SUCCESS
        if _GROUPS.depth:
            _GROUPS.queued.append(([(start, tensors)], stream))
        else:
            _submit([(start, tensors)], stream)
        return SUCCESS
    return call


def _group_start() -> int:
    _GROUPS.depth += 1
    return SUCCESS


def _group_end() -> int:
    queued = _GROUPS.queued
    if not _GROUPS.depth:
        return INVALID_USAGE
    _GROUPS.depth -= 1
    if _GROUPS.depth:
        return SUCCESS
    _GROUPS.queued = []
    by_stream: dict[Any, list[tuple[Callable[..., Finish], list[torch.Tensor]]]] = {}
    for steps, stream in queued:
        by_stream.setdefault(address_of(stream), []).extend(steps)
    for stream, steps in by_stream.items():
        _submit(steps, stream)
    return SUCCESS


def _send_and_receive(comm: _Comm, send: Any, recv: Any, count: Any, *_: Any) -> tuple[list[tuple[Any, int]], int]:
    """(sendbuff, recvbuff, count, datatype, ...): both buffers of ``count`` elements."""
    return [(send, value_of(count)), (recv, value_of(count))], 3


def _one_buffer(comm: _Comm, buffer: Any, count: Any, *_: Any) -> tuple[list[tuple[Any, int]], int]:
    """(buff, count, datatype, ...): one buffer, sent or received."""
    return [(buffer, value_of(count))], 2


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "ncclGetVersion": _version, "ncclGetErrorString": _error_string, "ncclGetUniqueId": _unique_id,
    "ncclCommInitRank": _init_rank, "ncclCommDestroy": _destroy, "ncclCommAbort": _destroy,
    "ncclCommFinalize": lambda handle: SUCCESS if _comm(handle) is not None else INVALID_ARGUMENT,
    "ncclCommCount": _query(lambda comm: comm.size), "ncclCommUserRank": _query(lambda comm: comm.rank),
    "ncclCommCuDevice": _query(lambda comm: 0), "ncclCommGetAsyncError": _query(lambda comm: SUCCESS),
    "ncclGetLastError": lambda handle: b"",
    "ncclCommWindowRegister": _window_register, "ncclCommWindowDeregister": _window_deregister,
    "ncclGroupStart": _group_start, "ncclGroupEnd": _group_end,
    # (sendbuff, recvbuff, count, datatype, op, comm, stream)
    "ncclAllReduce": _operation(_all_reduce, _send_and_receive, op_at=0),
    # (sendbuff, recvbuff, count, datatype, root, comm, stream)
    "ncclBroadcast": _operation(_broadcast, _send_and_receive, rank_at=0),
    # (buff, count, datatype, root, comm, stream): in place
    "ncclBcast": _operation(_broadcast, lambda comm, b, n, *_: ([(b, value_of(n))] * 2, 2), rank_at=0),
    # (sendbuff, recvbuff, count, datatype, op, root, comm, stream): recvbuff matters on the root only
    "ncclReduce": _operation(_reduce, lambda comm, s, r, n, d, op, root: (
        [(s, value_of(n))] + ([(r, value_of(n))] if comm.rank == value_of(root) else []), 3), op_at=0, rank_at=1),
    # (sendbuff, recvbuff, sendcount, datatype, comm, stream)
    "ncclAllGather": _operation(_all_gather, lambda comm, s, r, n, *_: (
        [(s, value_of(n)), (r, value_of(n) * comm.size)], 3)),
    # (sendbuff, recvbuff, recvcount, datatype, op, comm, stream)
    "ncclReduceScatter": _operation(_reduce_scatter, lambda comm, s, r, n, *_: (
        [(s, value_of(n) * comm.size), (r, value_of(n))], 3), op_at=0),
    # (buff, count, datatype, peer, comm, stream)
    "ncclSend": _operation(_send, _one_buffer, rank_at=0),
    "ncclRecv": _operation(_recv, _one_buffer, rank_at=0),
}

LIBRARY = Library("nccl", FUNCTIONS, not_supported=INVALID_USAGE, not_found=SYSTEM_ERROR)


def forget() -> None:
    """Leaving the emulation: the communicators and the store made in it are let go."""
    global _GROUPS
    _COMMS.clear()
    _SERVER.clear()
    _GROUPS = _GroupState()
