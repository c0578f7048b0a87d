"""torch.compile traces Python indexing of device tensors (``x[1:3]``, ``x[:, 0]``, ``x[ids]``, ``x[:2] = v``) as a
GPU build does, and the compiled code gives the eager values.

torch's C++ opens a device guard on a tensor's device before indexing it (``THPVariable_getitem``), and torch.compile
traces with fake tensors on ``cuda:0``. A CPU-only build of torch registers no CUDA guard, so until the emulation
gave it one (``seam/torch_cuda/device_guard.py``) every such trace raised "PyTorch is not linked with support for
cuda devices" and dynamo refused the graph: an engine's model, which slices everywhere, did not compile on the
emulated arm. PyTorch's own ``test/dynamo/test_cudagraphs.py`` (``test_dead_fill``) failed there so.

A factory that names the device while every dispatch mode is off (dynamo compiles so; its ``verify_correctness``
copies a graph's real inputs with ``torch.empty(..., device=x.device)``) makes a device tensor, as on a GPU build;
it raised NotImplementedError from the CPU-only build's empty CUDA backend before.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
import torch
from torch.utils._python_dispatch import _disable_current_modes


def _setitem(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[:2] = 5.0
    return y * 2


BODIES: dict[str, Callable[[torch.Tensor], Any]] = {
    "slice": lambda x: x[1:3] * 2,
    "empty slice": lambda x: (x[0:0] + 1, x * 3),
    "column": lambda x: x.view(4, 5)[:, 0] + 1,
    "ellipsis and none": lambda x: x.view(4, 5)[..., None, 2:4].sum(-1),
    "tensor index": lambda x: x[torch.tensor([1, 7, 2], device=x.device)] + 1,
    "boolean of a comparison": lambda x: torch.where(x > 10, x, -x)[::3],
    "setitem": _setitem,
}


def _flat(out: Any) -> list[torch.Tensor]:
    return list(out) if isinstance(out, tuple) else [out]


@pytest.mark.parametrize("body", BODIES)
@pytest.mark.parametrize("compiler", ["aot_eager", "cudagraphs"])
def test_a_compiled_function_that_indexes_a_device_tensor_gives_the_eager_values(torch_cuda: str, body: str,
                                                                                   compiler: str) -> None:
    torch._dynamo.reset()
    fn = BODIES[body]
    x = torch.arange(20.0, device="cuda")
    compiled = torch.compile(fn, backend=compiler, fullgraph=True)
    for step in range(3):  # the cudagraphs backend records at a call and replays at the next ones
        x.add_(step)
        got, want = _flat(compiled(x)), _flat(fn(x))
        assert [t.device for t in got] == [t.device for t in want] == [x.device] * len(want)
        assert [t.tolist() for t in got] == [t.tolist() for t in want], (body, compiler, step)
    torch._dynamo.reset()


def test_a_graph_tree_rebuilds_an_empty_output_from_its_null_pointer(torch_cuda: str) -> None:
    """An empty tensor has no memory and a null pointer; a CUDA graph tree rebuilds such an output from it at each
    replay (``torch._C._construct_storage_from_data_pointer(0, device, 0)``), which the emulator refused ("no device
    storage starts at 0x0"; PyTorch's ``test_mutated_metadata`` compiles a function of an empty input so)."""
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: x.clone() * 2, backend="cudagraphs")
    for _ in range(3):
        out = compiled(torch.empty(0, device="cuda"))
        assert out.is_cuda and out.shape == (0,)
    torch._dynamo.reset()


def test_a_factory_naming_the_device_while_every_mode_is_off_makes_a_device_tensor(torch_cuda: str) -> None:
    x = torch.arange(6.0, device="cuda")
    with _disable_current_modes():
        made = [torch.empty(4, device=x.device), torch.zeros(2, 3, device="cuda"), torch.full((3,), 7.0, device="cuda:0")]
    assert [t.device.type for t in made] == ["cuda"] * 3 and all(t.is_cuda for t in made)
    made[0].copy_(x[:4])
    assert (made[0] + made[1].sum()).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert made[2].tolist() == [7.0, 7.0, 7.0]


def test_a_backend_checked_against_the_graph_on_real_inputs_compiles(torch_cuda: str) -> None:
    """dynamo's ``verify_correctness`` runs the graph and the compiled candidate on copies of the real inputs while
    it compiles (PyTorch's ``test_mutated_metadata`` and ``test_dead_fill`` set it)."""
    torch._dynamo.reset()

    def model(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y.fill_(2)
        return y * 3 + x

    with torch._dynamo.config.patch(verify_correctness=True):
        compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
        out = compiled(torch.arange(4.0, device="cuda"))
    assert out.device == torch.device("cuda", 0) and out.tolist() == [6.0, 7.0, 8.0, 9.0]
    torch._dynamo.reset()



def test_a_graph_trees_outputs_that_only_graphs_hold_are_dead_to_its_pool_check(torch_cuda: str) -> None:
    """A CUDA graph tree asks torch's use count whether an output it holds weakly still lives; on a GPU a graph holds
    no memory, so an output only graphs read is dead to it, as the allocator model has freed it. PyTorch's
    ``test_dead_fill`` under its own test settings (``verify_correctness``, ``slow_path_cudagraph_asserts``) failed
    the recording after its first: "These storage data ptrs are not allocated in pool ... but should be"."""
    import torch._inductor.config as inductor_config
    from torch._dynamo.testing import same

    torch._dynamo.reset()

    def model(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x.clone()
        y = x[0:0]
        x.fill_(2)
        y.fill_(3)
        return x, y

    def steps(x: torch.Tensor) -> None:  # compiled whole, as the test compiles its loop: a graph break at each check
        for _ in range(5):
            rx, ry = model(x)
            assert same(rx, torch.full((20,), 2.0, device="cuda")) and same(ry, torch.empty(0, device="cuda"))

    with torch._dynamo.config.patch(verify_correctness=True), \
            inductor_config.patch({"triton.slow_path_cudagraph_asserts": True}):
        torch.compile(steps, backend="cudagraphs")(torch.empty(20, device="cuda"))
    torch._dynamo.reset()
