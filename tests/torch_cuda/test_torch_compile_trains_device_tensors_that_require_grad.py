"""torch.compile compiles a training step over device tensors that require grad, as a GPU build does, and its
gradients are eager's.

torch.compile traces a backward (AOTAutograd's joint graph) by running autograd's engine on fake ``cuda:0`` tensors,
and the engine asks the accelerator for such a gradient's stream; a CPU-only torch has no accelerator ("Cannot
access accelerator device when none is available."), so until the emulation told the engine CUDA is built while it
traces (``seam/torch_cuda/accelerator_hooks.py``) every such frame was refused and ran uncompiled. PyTorch's own
``test/dynamo/test_cudagraphs.py`` trains so: 4 of its 9 tests passed emulated, 9 on the H100.

Two more rules that file needed, each a GPU's behaviour:
- dynamo's ``verify_correctness`` runs a compiled graph while the device mode is off, and a graph that makes a tensor
  on the device (``aten.zeros(..., device=cuda:0)``) reached a CPU-only torch's empty CUDA backend
  (``seam/torch_cuda/device_factories.py``; since session 34 that run is device work under the device mode:
  ``seam/torch_cuda/compile_time_runs.py``);
- a CUDA graph tree weakly holds a warm-up's copy of an input that only a recorded graph reads; on a GPU a graph holds
  no memory, so the copy is dead once nothing else holds it, and the tree's check of its pool must agree
  (``pools.gpu_use_count``; before: "These storage data ptrs are not allocated in pool ... but should be").
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import pytest
import torch
import torch._dynamo
import torch._dynamo.utils

from tests.torch_cuda.training_steps import STEPS, train



def _model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((x + y) * y).sum()


def _with_a_factory(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    made = torch.zeros(3, device="cuda:0")
    made.add_(3)
    return (made * x * y).sum()


def _mlp(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x.view(3, 1) @ y.view(1, 3)).pow(2).mean()


MODELS: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "pointwise": _model, "a factory inside": _with_a_factory, "matmul": _mlp}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("compiler", ["aot_eager", "cudagraphs"])
def test_a_compiled_training_step_gives_eagers_gradients(torch_cuda: str, model: str, compiler: str) -> None:
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    fn = MODELS[model]
    start = [0.5, -1.0, 2.0]
    y = torch.tensor([1.5, 0.25, -2.0], device="cuda")
    want = train(fn, torch.tensor(start, device="cuda", requires_grad=True), y)
    x = torch.tensor(start, device="cuda", requires_grad=True)
    got = train(torch.compile(fn, backend=compiler, fullgraph=True), x, y)
    assert x.grad.device == x.device and x.grad.is_cuda
    assert torch.allclose(torch.tensor(got), torch.tensor(want), atol=1e-6), (got, want)
    assert torch._dynamo.utils.counters["aot_autograd"]["ok"] >= 1  # traced with its backward, not run as written
    torch._dynamo.reset()


@pytest.mark.parametrize("model", MODELS)
def test_dynamos_correctness_check_passes_training_steps_in_a_graph_tree(torch_cuda: str, model: str) -> None:
    """``verify_correctness`` (PyTorch's test_cudagraphs.py turns it on) runs each compiled graph at compile time with
    the device mode off; the steps are compiled as that file compiles them (the backward inside the compiled function,
    where dynamo breaks the graph), and the tree records and replays the forward and the backward and checks its pool
    each time."""
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    fn = MODELS[model]
    y = torch.tensor([1.5, 0.25, -2.0], device="cuda")

    def steps(x: torch.Tensor) -> None:
        for _ in range(STEPS):
            fn(x, y).backward()

    want = torch.tensor([0.5, -1.0, 2.0], device="cuda", requires_grad=True)
    steps(want)
    x = torch.tensor([0.5, -1.0, 2.0], device="cuda", requires_grad=True)
    with torch._dynamo.config.patch(verify_correctness=True):
        torch.compile(steps, backend="cudagraphs")(x)
    assert torch.allclose(x.grad, want.grad, atol=1e-6), (x.grad, want.grad)
    assert torch._dynamo.utils.counters["aot_autograd"]["ok"] >= 1
    assert torch._dynamo.utils.counters["aot_autograd"]["not_ok"] == 0
    torch._dynamo.reset()


def test_a_compiled_modules_weights_train_as_eagers(torch_cuda: str) -> None:
    """A module's parameters require grad by default: the whole forward compiles, the optimizer steps on the device."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    eager = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 2)).cuda()
    compiled_module = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 2)).cuda()
    compiled_module.load_state_dict(eager.state_dict())
    compiled = torch.compile(compiled_module, backend="aot_eager", fullgraph=True)
    x = torch.linspace(-1, 1, 12, device="cuda").view(3, 4)
    losses: dict[str, list[float]] = {"eager": [], "compiled": []}
    for name, module, params in (("eager", eager, eager.parameters()),
                                 ("compiled", compiled, compiled_module.parameters())):
        opt = torch.optim.SGD(params, lr=0.1)
        for _ in range(STEPS):
            opt.zero_grad()
            loss = module(x).pow(2).sum()
            loss.backward()
            opt.step()
            losses[name].append(loss.item())
    assert torch.allclose(torch.tensor(losses["compiled"]), torch.tensor(losses["eager"]), atol=1e-5), losses
    assert all(p.device.type == "cuda" and p.grad is not None for p in compiled_module.parameters())
    torch._dynamo.reset()


def test_where_torchs_hooks_cannot_be_reached_the_frame_is_refused_in_seamgates_words(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulation's fallback (``seam/torch_cuda/compiling.py``): where the CUDA hooks are not found (a torch older
    than those measured, another platform), ``fullgraph=True`` raises dynamo's Unsupported with seamgate's words."""
    from torch._dynamo.exc import Unsupported

    from seam.torch_cuda import accelerator_hooks, emulate_cuda
    from seam.torch_cuda.compiling import REQUIRES_GRAD

    monkeypatch.setattr(accelerator_hooks, "_found", [None])
    torch._dynamo.reset()
    with emulate_cuda():
        w = torch.ones(4, device="cuda", requires_grad=True)
        with pytest.raises(Unsupported, match="seamgate's CUDA emulator: torch.compile cannot trace") as err:
            torch.compile(lambda t: t * 2, backend="eager", fullgraph=True)(w)
        assert f"{REQUIRES_GRAD}: (4,) torch.float32" in str(err.value)  # the whole reason, and the tensor named
    torch._dynamo.reset()


def test_cpp_sees_cuda_built_only_while_a_traced_backward_runs() -> None:
    """C++ sees CUDA built only while the engine runs a backward of fake tensors: before and after it, and in the
    emulation's own (eager) backward, the hooks object's table is torch's own (a CPU-only build then has no
    accelerator, as torch says outside the emulation)."""
    from seam.torch_cuda import accelerator_hooks, emulate_cuda

    hooks = accelerator_hooks._hooks()
    if hooks is None:
        pytest.skip("nothing is swapped here: a GPU is there (torch's own hooks answer), or a torch older than measured")
    inside: list[Any] = []
    real = accelerator_hooks.cuda_is_built

    @contextlib.contextmanager
    def watched() -> Iterator[None]:
        with real():
            inside.append(torch._C._accelerator_getAccelerator())
            yield

    before = torch._C._accelerator_getAccelerator()
    torch._dynamo.reset()
    with emulate_cuda():
        accelerator_hooks.cuda_is_built = watched
        try:
            x = torch.ones(3, device="cuda", requires_grad=True)
            torch.compile(lambda t: (t * t).sum(), backend="aot_eager", fullgraph=True)(x).backward()
            (x * 3).sum().backward()  # the emulation's own device tensors: CPU tensors to the engine
        finally:
            accelerator_hooks.cuda_is_built = real
        assert torch._C._accelerator_getAccelerator() == before
        assert hooks.pointer.value == hooks.own and hooks.users == 0
        assert x.grad.tolist() == [5.0, 5.0, 5.0]
    torch._dynamo.reset()
    assert inside == [torch.device("cuda")]  # the one traced backward, with CUDA the accelerator
    assert torch._C._accelerator_getAccelerator() == before


def test_the_swapped_table_is_the_interfaces_own_length_with_two_entries_changed() -> None:
    """The copy is as long as ``CUDAHooksInterface``'s table, read from its exported symbol's size (it once copied
    128 entries, past the end of a table of about 48), and differs from torch's own in ``isBuilt`` and
    ``hasPrimaryContext`` alone."""
    import ctypes

    from seam.torch_cuda import accelerator_hooks
    from seam.torch_cuda.device_guard import torch_library

    hooks = accelerator_hooks._hooks()
    if hooks is None:
        pytest.skip("nothing is swapped here: a GPU is there (torch's own hooks answer), or a torch older than measured")
    functions = accelerator_hooks._functions_of_the_interface(torch_library("libtorch_cpu.so"))
    assert functions is not None and accelerator_hooks.HAS_PRIMARY_CONTEXT < functions < 128
    assert len(hooks.table) == functions
    own = (ctypes.c_void_p * functions).from_address(hooks.own)
    changed = [i for i in range(functions) if own[i] != hooks.table[i]]
    assert changed == [accelerator_hooks.IS_BUILT, accelerator_hooks.HAS_PRIMARY_CONTEXT]
