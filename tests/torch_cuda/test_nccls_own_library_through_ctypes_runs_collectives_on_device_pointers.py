"""NCCL's own library through ``ctypes``, on both arms: vLLM's ``PyNcclCommunicator`` and SGLang's pynccl load
``libnccl.so.2`` and call its C API with raw device pointers and a ``cudaStream_t``, inside their CUDA graphs too.
Emulated, a CPU machine had no such library ("cannot open shared object file"), so such a communicator was
disabled and its graphs held no collective (``seam/torch_cuda/nccl_library.py`` since session 37). The binding below
is this suite's own, declared from NCCL's public C API (``nccl.h``) as such bindings declare it. One rank per process
on both arms; the emulated arm also runs two ranks in two processes.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest
import torch

from seam.torch_cuda import emulate_cuda
from tests.torch_cuda.side_capture import refused_at_its_end, replayed_with, warmed_and_captured

ROOT = Path(__file__).resolve().parents[2]
# On the cuda arm in a process of their own (conftest.py): after NCCL's ncclCommInitRank was refused inside a capture
# on the H100 (session 40, calls 3-8), a later file's capture calls in the same process aborted it ("terminate called
# after throwing an instance of 'c10::Error' what(): The graph should be registered to the state", from
# ~CUDAGraph): the refused-begin file's first cases, after this module, in calls 6 and 8 of session 39.
pytestmark = pytest.mark.own_process
FLOAT, INT32 = 7, 2  # ncclFloat32, ncclInt32
SUM, PROD, MAX, AVG = 0, 1, 2, 4
INVALID_ARGUMENT = 4

BINDING = r'''
import ctypes


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_byte * 128)]


P, I, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
SIGNATURES = {
    "ncclGetVersion": [ctypes.POINTER(I)], "ncclGetUniqueId": [ctypes.POINTER(UniqueId)],
    "ncclCommInitRank": [ctypes.POINTER(P), I, UniqueId, I], "ncclCommDestroy": [P],
    "ncclCommCount": [P, ctypes.POINTER(I)], "ncclCommUserRank": [P, ctypes.POINTER(I)],
    "ncclAllReduce": [P, P, S, I, I, P, P], "ncclBroadcast": [P, P, S, I, I, P, P], "ncclBcast": [P, S, I, I, P, P],
    "ncclReduce": [P, P, S, I, I, I, P, P], "ncclAllGather": [P, P, S, I, P, P],
    "ncclReduceScatter": [P, P, S, I, I, P, P], "ncclSend": [P, S, I, I, P, P], "ncclRecv": [P, S, I, I, P, P],
    "ncclGroupStart": [], "ncclGroupEnd": [],
}


def load():
    lib = ctypes.CDLL("libnccl.so.2")
    for name, args in SIGNATURES.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = ctypes.c_int, args
    lib.ncclGetErrorString.restype, lib.ncclGetErrorString.argtypes = ctypes.c_char_p, [ctypes.c_int]
    return lib


def communicator(lib, ranks=1, rank=0, unique_id=None):
    if unique_id is None:
        unique_id = UniqueId()
        assert lib.ncclGetUniqueId(ctypes.byref(unique_id)) == 0
    comm = P()
    assert lib.ncclCommInitRank(ctypes.byref(comm), ranks, unique_id, rank) == 0
    return comm
'''
binding: Any = type(sys)("nccl_binding")
exec(compile(BINDING, "nccl_binding", "exec"), binding.__dict__)


@contextlib.contextmanager
def _one_rank() -> Iterator[tuple[Any, Any]]:
    """The library and a communicator of one rank, destroyed on the way out."""
    lib = binding.load()
    comm = binding.communicator(lib)
    try:
        yield lib, comm
    finally:
        assert lib.ncclCommDestroy(comm) == 0


def _stream() -> int:
    return torch.cuda.current_stream().cuda_stream


def _ptr(t: torch.Tensor) -> ctypes.c_void_p:
    return ctypes.c_void_p(t.data_ptr())


def test_the_library_names_the_nccl_torch_carries_and_nccls_words(torch_cuda: str) -> None:
    torch.zeros(1, device="cuda")
    lib = binding.load()
    version = ctypes.c_int()
    assert lib.ncclGetVersion(ctypes.byref(version)) == 0
    major, minor, patch = torch.cuda.nccl.version()[:3]
    assert version.value == major * 10000 + minor * 100 + patch
    assert [lib.ncclGetErrorString(code) for code in (0, 4, 5)] == [
        b"no error", b"invalid argument (run with NCCL_DEBUG=WARN for details)",
        b"invalid usage (run with NCCL_DEBUG=WARN for details)"]


def test_a_communicator_of_one_rank_reduces_gathers_and_broadcasts_device_pointers(torch_cuda: str) -> None:
    with _one_rank() as (lib, comm):
        count, rank = ctypes.c_int(), ctypes.c_int()
        assert (lib.ncclCommCount(comm, ctypes.byref(count)), lib.ncclCommUserRank(comm, ctypes.byref(rank))) == (0, 0)
        x = torch.arange(8.0, device="cuda")
        outs = {name: torch.full((4,), -1.0, device="cuda") for name in
                ("sum", "view", "gather", "scatter", "broadcast", "reduce")}
        s = _stream()
        assert lib.ncclAllReduce(_ptr(x), _ptr(outs["sum"]), 4, FLOAT, SUM, comm, s) == 0
        assert lib.ncclAllReduce(_ptr(x[4:]), _ptr(outs["view"]), 4, FLOAT, MAX, comm, s) == 0  # a pointer in a block
        assert lib.ncclAllGather(_ptr(x[2:]), _ptr(outs["gather"]), 4, FLOAT, comm, s) == 0
        assert lib.ncclReduceScatter(_ptr(x), _ptr(outs["scatter"]), 4, FLOAT, SUM, comm, s) == 0
        assert lib.ncclBroadcast(_ptr(x[1:]), _ptr(outs["broadcast"]), 4, FLOAT, 0, comm, s) == 0
        assert lib.ncclReduce(_ptr(x[3:]), _ptr(outs["reduce"]), 4, FLOAT, PROD, 0, comm, s) == 0
        y = torch.tensor([7, 9], dtype=torch.int32, device="cuda")
        assert lib.ncclBcast(_ptr(y), 2, INT32, 0, comm, s) == 0
        assert lib.ncclAllReduce(_ptr(y), _ptr(y), 2, INT32, AVG, comm, s) == 0  # in place
        torch.cuda.synchronize()
        assert {name: t.tolist() for name, t in outs.items()} == {
            "sum": [0.0, 1.0, 2.0, 3.0], "view": [4.0, 5.0, 6.0, 7.0], "gather": [2.0, 3.0, 4.0, 5.0],
            "scatter": [0.0, 1.0, 2.0, 3.0], "broadcast": [1.0, 2.0, 3.0, 4.0], "reduce": [3.0, 4.0, 5.0, 6.0]}
        assert y.tolist() == [7, 9]


def test_arguments_nccl_checks_are_refused_as_invalid(torch_cuda: str) -> None:
    with _one_rank() as (lib, comm):
        x = torch.ones(4, device="cuda")
        assert [lib.ncclAllReduce(_ptr(x), _ptr(x), 4, 99, SUM, comm, _stream()),  # no such datatype
                lib.ncclAllReduce(_ptr(x), _ptr(x), 4, FLOAT, 99, comm, _stream()),  # no such reduction
                lib.ncclBroadcast(_ptr(x), _ptr(x), 4, FLOAT, 1, comm, _stream())] == [INVALID_ARGUMENT] * 3  # root
        torch.cuda.synchronize()
        assert x.tolist() == [1.0] * 4


def test_a_captured_all_reduce_runs_again_at_each_replay_on_the_captured_memory(torch_cuda: str) -> None:
    with _one_rank() as (lib, comm):
        inp, out = torch.ones(4, device="cuda"), torch.zeros(4, device="cuda")

        def step() -> None:
            y = inp * 3
            assert lib.ncclAllReduce(_ptr(y), _ptr(out), 4, FLOAT, SUM, comm, _stream()) == 0

        graph = warmed_and_captured(step)
        assert replayed_with(graph, inp, out, (2.0, 5.0)) == [[6.0] * 4, [15.0] * 4]


def test_a_group_of_calls_in_a_capture_runs_all_of_them_at_each_replay(torch_cuda: str) -> None:
    with _one_rank() as (lib, comm):
        a, b = torch.ones(2, device="cuda"), torch.ones(3, device="cuda")
        out_a, out_b = torch.zeros(2, device="cuda"), torch.zeros(3, device="cuda")

        def step() -> None:
            assert lib.ncclGroupStart() == 0
            assert lib.ncclAllReduce(_ptr(a), _ptr(out_a), 2, FLOAT, SUM, comm, _stream()) == 0
            assert lib.ncclBroadcast(_ptr(b), _ptr(out_b), 3, FLOAT, 0, comm, _stream()) == 0
            assert lib.ncclGroupEnd() == 0

        graph = warmed_and_captured(step)
        a.fill_(4.0)
        b.fill_(6.0)
        graph.replay()
        torch.cuda.synchronize()
        assert (out_a.tolist(), out_b.tolist()) == ([4.0] * 2, [6.0] * 3)


def test_one_rank_in_place_launches_nothing_and_reads_no_memory(torch_cuda: str) -> None:
    # NCCL's one-rank path (H100, session 37): in place there is nothing to do, so the pointer is never read (pinned
    # host memory here) and a capture of the call is empty
    with _one_rank() as (lib, comm):
        host = torch.arange(4.0).pin_memory()
        assert lib.ncclAllReduce(_ptr(host), _ptr(host), 4, FLOAT, SUM, comm, _stream()) == 0
        x = torch.arange(4.0, device="cuda")
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with pytest.warns(UserWarning, match="The CUDA Graph is empty"):
            with torch.cuda.graph(graph):
                assert lib.ncclAllReduce(_ptr(x), _ptr(x), 4, FLOAT, SUM, comm, _stream()) == 0
        graph.replay()
        torch.cuda.synchronize()
        assert (host.tolist(), x.tolist()) == ([0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0])


def test_a_call_of_no_elements_succeeds_with_the_null_pointer_of_an_empty_tensor(torch_cuda: str) -> None:
    # an engine's all-reduce of an empty batch: an empty device tensor's data_ptr() is NULL, and NCCL moves nothing
    with _one_rank() as (lib, comm):
        empty, out = torch.empty(0, device="cuda"), torch.full((2,), -1.0, device="cuda")
        assert empty.data_ptr() == 0
        assert [lib.ncclAllReduce(_ptr(empty), _ptr(out), 0, FLOAT, SUM, comm, _stream()),
                lib.ncclAllGather(_ptr(empty), _ptr(out), 0, FLOAT, comm, _stream()),
                lib.ncclBroadcast(_ptr(empty), _ptr(out), 0, FLOAT, 0, comm, _stream())] == [0, 0, 0]
        torch.cuda.synchronize()
        assert out.tolist() == [-1.0, -1.0]


def test_a_communicator_made_inside_a_capture_is_refused(torch_cuda: str) -> None:
    # NCCL allocates device memory and waits as it makes a communicator: the H100 refused it inside a capture
    lib = binding.load()
    unique_id, comm = binding.UniqueId(), ctypes.c_void_p()
    assert lib.ncclGetUniqueId(ctypes.byref(unique_id)) == 0
    refused_at_its_end(lambda: lib.ncclCommInitRank(ctypes.byref(comm), 1, unique_id, 0))


def test_a_released_graph_lets_its_library_calls_go() -> None:
    from seam.torch_cuda import collectives

    with emulate_cuda():
        lib = binding.load()
        comm = binding.communicator(lib)
        x, y = torch.ones(4, device="cuda"), torch.empty(4, device="cuda")
        before = set(collectives._CALLS)
        graph = warmed_and_captured(lambda: lib.ncclAllReduce(_ptr(x), _ptr(y), 4, FLOAT, SUM, comm, _stream()))
        held = set(collectives._CALLS) - before
        tensors = [t for number in held for t in collectives._CALLS[number].tensors()]
        del graph
        gc.collect()
        assert (len(held), held & set(collectives._CALLS), tensors) == (1, set(), [])


RANK = r'''
import ctypes, os, sys, time, torch
from seam.torch_cuda import emulate_cuda
rank, path = int(sys.argv[1]), sys.argv[2]
namespace = {}
exec(sys.argv[3], namespace)
P = ctypes.c_void_p
with emulate_cuda():
    lib = namespace["load"]()
    unique_id = namespace["UniqueId"]()
    if rank == 0:
        assert lib.ncclGetUniqueId(ctypes.byref(unique_id)) == 0
        open(path + ".part", "wb").write(bytes(unique_id))
        os.rename(path + ".part", path)  # handed to rank 1 as a program hands it (vLLM: through its CPU group)
    else:
        while not os.path.exists(path):
            time.sleep(0.02)
        ctypes.memmove(ctypes.addressof(unique_id), open(path, "rb").read(), 128)
    comm = namespace["communicator"](lib, 2, rank, unique_id)
    s = torch.cuda.current_stream().cuda_stream
    x = torch.full((3,), float(rank + 1), device="cuda")
    mean = torch.tensor([rank * 3], dtype=torch.int32, device="cuda")
    part = torch.full((2,), float(rank), device="cuda"); gathered = torch.empty(4, device="cuda")
    whole = torch.arange(4.0, device="cuda"); scattered = torch.empty(2, device="cuda")
    sent, received = torch.full((2,), 10.0 + rank, device="cuda"), torch.zeros(2, device="cuda")
    codes = [lib.ncclAllReduce(P(x.data_ptr()), P(x.data_ptr()), 3, 7, 0, comm, s),
             lib.ncclAllReduce(P(mean.data_ptr()), P(mean.data_ptr()), 1, 2, 4, comm, s),
             lib.ncclAllGather(P(part.data_ptr()), P(gathered.data_ptr()), 2, 7, comm, s),
             lib.ncclReduceScatter(P(whole.data_ptr()), P(scattered.data_ptr()), 2, 7, 0, comm, s),
             lib.ncclGroupStart(),
             lib.ncclSend(P(sent.data_ptr()), 2, 7, 1 - rank, comm, s),
             lib.ncclRecv(P(received.data_ptr()), 2, 7, 1 - rank, comm, s),
             lib.ncclGroupEnd()]
    inp = torch.full((2,), float(rank + 1), device="cuda")
    side = torch.cuda.Stream(); side.wait_stream(torch.cuda.current_stream())
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=side):
        y = inp * 10
        codes.append(lib.ncclAllReduce(P(y.data_ptr()), P(y.data_ptr()), 2, 7, 0, comm, side.cuda_stream))
    inp.fill_(rank + 2)
    g.replay(); torch.cuda.synchronize()
    print(codes, x.tolist(), mean.tolist(), gathered.tolist(), scattered.tolist(), received.tolist(), y.tolist(),
          flush=True)
    lib.ncclCommDestroy(comm)
'''


def test_two_emulated_ranks_in_two_processes_meet_through_the_unique_id_and_reduce_in_a_replay() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
    with tempfile.TemporaryDirectory() as scratch:
        path = str(Path(scratch) / "unique-id")
        ranks = [subprocess.Popen([sys.executable, "-c", RANK, str(rank), path, BINDING], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env) for rank in (0, 1)]
        outputs = [rank.communicate(timeout=300) for rank in ranks]
    lines = []
    for (out, err), rank in zip(outputs, ranks):
        assert rank.returncode == 0, err[-2000:]
        lines.append(out.strip())
    # sums of 1 and 2; the integer mean of 0 and 3; rank 0's then rank 1's; rank r's half of the sum of both
    # aranges; the other rank's; the replay's (2 + 3) * 10
    assert lines == ["[0, 0, 0, 0, 0, 0, 0, 0, 0] [3.0, 3.0, 3.0] [1] [0.0, 0.0, 1.0, 1.0] [0.0, 2.0] [11.0, 11.0] "
                     "[50.0, 50.0]",
                     "[0, 0, 0, 0, 0, 0, 0, 0, 0] [3.0, 3.0, 3.0] [1] [0.0, 0.0, 1.0, 1.0] [4.0, 6.0] [10.0, 10.0] "
                     "[50.0, 50.0]"]
