"""``torch.cuda.nccl``'s direct calls (tensor lists, one tensor per GPU: what ``torch.nn.parallel``'s ``comm`` calls),
on both arms. A CPU-only torch has no ``torch._C._nccl_*`` bindings, so emulated every call raised AttributeError and
``is_available`` said False (``seam/torch_cuda/nccl_direct.py`` since session 41). One device here, so each list holds
one tensor. The module runs its cuda cases in one process of its own (``own_process``): torch makes a device list's
communicators at the process's first call, and its first case asks what a first call inside a capture does.
"""

from __future__ import annotations

import sys

import pytest
import torch

from tests.torch_cuda.side_capture import refused_at_its_end, replayed_with, warmed_and_captured

pytestmark = pytest.mark.own_process
MAX = 2  # ncclMax
#: Whether this Python refuses a '#' format of a C function built without ``PY_SSIZE_T_CLEAN`` (3.10 to 3.12).
REFUSES_HASH_FORMATS = (3, 10) <= sys.version_info[:2] < (3, 13)


def _nccl():  # imported on the arm: torch.cuda.nccl reads torch._C's bindings at each call
    import torch.cuda.nccl as nccl
    return nccl


def test_a_processs_first_direct_call_inside_a_capture_is_refused_and_the_next_outside_works(torch_cuda: str) -> None:
    # torch makes the device list's communicators at its first call: NCCL allocates and waits, which a capture refuses.
    # The first case of the module: on a GPU the communicators live as long as the process, and the cuda arm runs the
    # module in one process of its own (``own_process``), so a call of any case before it made them (H100, session 42:
    # placed after the others, it saw no refusal). The emulation forgets them when it is left.
    nccl = _nccl()
    x, y = torch.ones(4, device="cuda"), torch.zeros(4, device="cuda")
    refused_at_its_end(lambda: nccl.all_reduce([x], [y]))
    x.fill_(2.0)
    nccl.all_reduce([x], [y])
    torch.cuda.synchronize()
    assert y.tolist() == [2.0] * 4


def test_each_direct_call_gives_one_devices_values(torch_cuda: str) -> None:
    nccl = _nccl()
    x = torch.arange(1.0, 5.0, device="cuda")
    outs = [torch.zeros(4, device="cuda") for _ in range(4)]
    nccl.all_reduce([x], [outs[0]])
    nccl.reduce([x], outs[1], root=0)
    nccl.all_gather([x], [outs[2]])
    nccl.reduce_scatter([x], [outs[3]])
    y = torch.arange(4, device="cuda", dtype=torch.int32)
    nccl.all_reduce([y], op=MAX)
    nccl.broadcast([y], root=0)
    assert nccl.is_available([x]) and not nccl.is_available([x.cpu()])
    assert [o.tolist() for o in outs] == [[1.0, 2.0, 3.0, 4.0]] * 4
    assert (y.tolist(), x.tolist()) == ([0, 1, 2, 3], [1.0, 2.0, 3.0, 4.0])


def test_init_rank_refuses_its_hash_format_where_python_wants_py_ssize_t_clean(torch_cuda: str) -> None:
    """torch parses ``init_rank``'s arguments with ``"is#i"`` in a file without ``PY_SSIZE_T_CLEAN``: Python 3.10 to
    3.12 refuse a '#' format then (H100, torch 2.11.0+cu130, Python 3.12, session 42); 3.13 no longer asks for it."""
    nccl = _nccl()
    uid = nccl.unique_id()
    assert isinstance(uid, bytes) and len(uid) == 128
    if REFUSES_HASH_FORMATS:
        with pytest.raises(SystemError, match="PY_SSIZE_T_CLEAN macro must be defined for '#' formats"):
            nccl.init_rank(1, uid, 0)
        return
    x, z = torch.arange(1.0, 5.0, device="cuda"), torch.zeros(4, device="cuda")
    nccl.all_reduce([x], [z], comms=[nccl.init_rank(1, uid, 0)])
    assert z.tolist() == [1.0, 2.0, 3.0, 4.0]


REFUSALS = {
    "host_tensor": (lambda n, x: n.all_reduce([torch.ones(4)]), "input and output elements have to be cuda dense"),
    "two_on_one_device": (lambda n, x: n.all_reduce([x, torch.ones(4, device="cuda")]),
                          "inputs must be on unique devices"),
    "not_contiguous": (lambda n, x: n.all_reduce([torch.ones(4, 4, device="cuda").t()]),
                       "all inputs and outputs have to be contiguous"),
    "output_size": (lambda n, x: n.all_reduce([x], [torch.ones(3, device="cuda")]),
                    r"output must be of size input_size \* size_multiplier"),
    "output_dtype": (lambda n, x: n.all_reduce([x], [torch.ones(4, device="cuda", dtype=torch.float64)]),
                     "all inputs and outputs must be of the same Tensor dtype"),
    "all_gather_size": (lambda n, x: n.all_gather([x], [torch.ones(3, device="cuda")]),
                        r"output must be of size input_size \* size_multiplier"),
    "empty_list": (lambda n, x: n.all_reduce([]), "input sequence can't be empty"),
    "root_out_of_range": (lambda n, x: n.broadcast([x], root=1), "invalid root"),
    "complex_dtype": (lambda n, x: n.all_reduce([torch.zeros(4, device="cuda", dtype=torch.complex64)]),
                      "Unconvertible NCCL type ComplexFloat"),
}


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
def test_what_a_direct_call_refuses_is_said_in_torchs_words(torch_cuda: str, refusal: str) -> None:
    call, words = REFUSALS[refusal]
    x = torch.ones(4, device="cuda")
    with pytest.raises(RuntimeError, match=words):
        call(_nccl(), x)


def test_a_direct_call_captured_after_a_warm_up_runs_again_at_each_replay(torch_cuda: str) -> None:
    nccl = _nccl()
    x, y = torch.ones(4, device="cuda"), torch.zeros(4, device="cuda")
    graph = warmed_and_captured(lambda: nccl.all_reduce([x], [y]))
    assert replayed_with(graph, x, y, (3.0, 5.0)) == [[3.0] * 4, [5.0] * 4]


