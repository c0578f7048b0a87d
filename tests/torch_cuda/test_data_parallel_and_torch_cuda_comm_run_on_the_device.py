"""``torch.nn.DataParallel`` and ``torch.cuda.comm`` on one device, on both arms. ``DataParallel``'s forward scatters
its inputs with ``comm.scatter`` before it calls the module, on one GPU too, and its backward gathers the gradients
with ``comm.gather``; a CPU-only torch has none of the ``torch._C`` bindings under them (``_scatter``, ``_gather``,
``_broadcast``, ...), so emulated every such call raised AttributeError (``seam/torch_cuda/cuda_comm.py`` since
session 41). ``device_ids=[0]`` throughout: on a machine of several GPUs the default would spread the work.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

from tests.torch_cuda.side_capture import replayed_with, warmed_and_captured


def _comm() -> Any:
    import torch.cuda.comm as comm
    return comm


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).cuda()


def test_data_parallel_on_one_device_gives_the_modules_values_and_gradients(torch_cuda: str) -> None:
    model, plain = _model(), _model()
    x = torch.randn(5, 4, device="cuda", requires_grad=True)
    x_plain = x.detach().clone().requires_grad_()
    out = torch.nn.DataParallel(model, device_ids=[0])(x)
    out.square().sum().backward()
    expected = plain(x_plain)
    expected.square().sum().backward()
    assert (out.device, x.grad.device) == (torch.device("cuda", 0), torch.device("cuda", 0))
    assert torch.equal(out, expected) and torch.equal(x.grad, x_plain.grad)
    assert all(torch.equal(a.grad, b.grad) for a, b in zip(model.parameters(), plain.parameters()))


def test_scatter_keeps_a_device_chunk_and_copies_a_host_one(torch_cuda: str) -> None:
    comm = _comm()
    x = torch.arange(6.0, device="cuda").reshape(3, 2)
    (kept,) = comm.scatter(x, [0])
    (sized,) = comm.scatter(x, [0], chunk_sizes=[3])
    (copied,) = comm.scatter(x.cpu(), [0], streams=[torch.cuda.Stream()])
    torch.cuda.synchronize()
    assert (kept.data_ptr(), sized.data_ptr()) == (x.data_ptr(), x.data_ptr())
    assert copied.device == torch.device("cuda", 0) and copied.data_ptr() != x.data_ptr()
    assert copied.tolist() == x.tolist()


def test_gather_makes_one_new_tensor_on_the_device_or_the_host(torch_cuda: str) -> None:
    comm = _comm()
    a, b = torch.ones(2, 2, device="cuda"), torch.full((1, 2), 2.0, device="cuda")
    on_device, on_host = comm.gather([a, b], 0, 0), comm.gather([a, b], dim=0, destination="cpu")
    into = torch.empty(2, 3, device="cuda")
    comm.gather([a, b.t()], dim=1, out=into)
    assert (on_device.device, on_host.device) == (torch.device("cuda", 0), torch.device("cpu"))
    assert on_device.tolist() == on_host.tolist() == [[1.0, 1.0], [1.0, 1.0], [2.0, 2.0]]
    assert into.tolist() == [[1.0, 1.0, 2.0], [1.0, 1.0, 2.0]]


def test_broadcast_gives_the_source_itself_for_its_own_device(torch_cuda: str) -> None:
    comm = _comm()
    x, y = torch.ones(3, device="cuda"), torch.zeros(2, device="cuda", dtype=torch.int64)
    (same,) = comm.broadcast(x, [0])
    (from_host,) = comm.broadcast(torch.full((3,), 4.0), [0])
    out = torch.empty(3, device="cuda")
    comm.broadcast(torch.full((3,), 5.0), out=[out])
    coalesced = comm.broadcast_coalesced([x, y], [0])
    torch.cuda.synchronize()
    assert same is x and from_host.device == torch.device("cuda", 0)
    assert (from_host.tolist(), out.tolist()) == ([4.0] * 3, [5.0] * 3)
    assert len(coalesced) == 1 and [t is s for t, s in zip(coalesced[0], (x, y))] == [True, True]


REFUSALS: dict[str, tuple[Callable[[Any, torch.Tensor], Any], str]] = {
    "gather_of_a_host_tensor": (lambda c, x: c.gather([x.cpu()], 0, 0),
                                "Expected all input tensors to be CUDA tensors, but tensor at index 0 has device cpu"),
    "gather_of_two_shapes": (lambda c, x: c.gather([x, torch.ones(1, 3, device="cuda")], 0, 0),
                             r"Input tensor at index 1 has invalid shape \[1, 3\], but expected \[1, 2\]"),
    "gather_out_of_another_shape": (lambda c, x: c.gather([x], 0, out=torch.empty(2, device="cuda")),
                                    r"Expected out tensor to have shape \[3, 2\], but got \[2\]"),
    "scatter_chunk_sizes_of_another_length": (lambda c, x: c.scatter(x, [0], chunk_sizes=[1, 2]),
                                              "Expected devices and chunk_sizes to be of same length"),
    "scatter_out_to_a_host_tensor": (lambda c, x: c.scatter(x, out=[torch.empty(3, 2)]),
                                     "Expected all output tensors to be CUDA tensors, but output tensor at index 0"),
    "broadcast_out_of_another_shape": (lambda c, x: c.broadcast(x, out=[torch.empty(2, device="cuda")]),
                                       r"Expected all output tensors to have same shape as the source tensor \[3, 2\]"),
    "broadcast_coalesced_off_the_first_device": (lambda c, x: c.broadcast_coalesced([x.cpu()], [0]),
                                                 "All tensors must be on devices\\[0\\]: 0"),
}


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
def test_what_comm_refuses_is_said_in_torchs_words(torch_cuda: str, refusal: str) -> None:
    call, words = REFUSALS[refusal]
    with pytest.raises(RuntimeError, match=words):
        call(_comm(), torch.ones(3, 2, device="cuda"))


def test_scatter_to_a_second_device_is_an_invalid_ordinal(torch_cuda: str) -> None:
    if torch.cuda.device_count() > 1:
        pytest.skip("this machine has a second device: index 1 is there")
    with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"):
        _comm().scatter(torch.ones(4, device="cuda"), [0, 1])


def test_a_data_parallel_forward_captured_after_a_warm_up_replays_on_new_inputs(torch_cuda: str) -> None:
    model = _model()
    parallel = torch.nn.DataParallel(model, device_ids=[0])
    x, out = torch.zeros(5, 4, device="cuda"), torch.zeros(5, 2, device="cuda")
    with torch.no_grad():
        graph = warmed_and_captured(lambda: out.copy_(parallel(x)))
        seen = replayed_with(graph, x, out, (1.0, -2.0))
        expected = [model(torch.full((5, 4), v, device="cuda")).tolist() for v in (1.0, -2.0)]
    assert seen == expected


def test_a_gather_captured_after_a_warm_up_replays_into_its_memory(torch_cuda: str) -> None:
    comm = _comm()
    a, b, out = torch.zeros(2, device="cuda"), torch.ones(1, device="cuda"), torch.zeros(3, device="cuda")
    graph = warmed_and_captured(lambda: out.copy_(comm.gather([a, b], 0, 0)))
    assert replayed_with(graph, a, out, (2.0, 3.0)) == [[2.0, 2.0, 1.0], [3.0, 3.0, 1.0]]


@pytest.mark.parametrize("call", ["gather", "gather_out", "scatter_out"])
def test_a_dimension_out_of_range_is_refused_in_torchs_words(torch_cuda: str, call: str) -> None:
    comm, x = _comm(), torch.ones(3, 2, device="cuda")
    calls = {"gather": lambda: comm.gather([x], dim=5), "gather_out": lambda: comm.gather([x], dim=5, out=x),
             "scatter_out": lambda: comm.scatter(x, dim=5, out=[x])}
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)"):
        calls[call]()
