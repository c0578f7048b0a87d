"""``torch.compile`` traces code on the device whole, as on a GPU build, and the compiled code runs on the device.

torch.compile skips every frame while a dispatch mode is on the stack unless the mode asks to be left out of
compilation; the emulation's device mode does (``seam/torch_cuda/compiling.py``). Before that, ``fullgraph=True``
(engines compile their models so) raised "found no compiled frames" on the emulated arm only, and without it nothing
was compiled at all; inductor, the default compiler, needs Triton, which a CPU-only machine lacks, so a device graph
is compiled as aot_eager compiles it. Tracing reads torch's own tables of types and functions, so ``torch.device``'s
stand-in is equal to torch's class and ``torch.accelerator.current_stream`` is a function of its own, as on a GPU
build.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]


def _counting(graphs: list[Any]) -> Callable[..., Any]:
    """A dynamo backend that keeps each graph it is given and runs it as traced."""
    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        graphs.append(gm)
        return gm.forward
    return backend


def _body(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x @ w) + torch.ones(4, device=x.device)


@pytest.mark.parametrize("compiler", ["eager", "aot_eager"])
def test_a_whole_graph_compiles_and_runs_on_the_device(torch_cuda: str, compiler: str) -> None:
    torch._dynamo.reset()
    x, w = torch.randn(8, 16, device="cuda"), torch.randn(16, 4, device="cuda")
    out = torch.compile(_body, backend=compiler, fullgraph=True)(x, w)
    assert out.device == torch.device("cuda", 0)
    assert torch.allclose(out.cpu(), _body(x, w).cpu(), atol=1e-5)
    torch._dynamo.reset()


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_torch_compiles_default_compiler_gives_the_eager_values_on_the_device(torch_cuda: str, mode: Any) -> None:
    """On a CPU-only machine there is no Triton for inductor: the emulation compiles a device graph as aot_eager."""
    torch._dynamo.reset()
    compiled = torch.compile(_body, mode=mode, fullgraph=True)
    for _ in range(3):
        x, w = torch.randn(8, 16, device="cuda"), torch.randn(16, 4, device="cuda")
        out = compiled(x, w)
        assert out.device == torch.device("cuda", 0)
        assert torch.allclose(out.cpu(), _body(x, w).cpu(), atol=1e-4)
    torch._dynamo.reset()


def test_the_traced_graph_is_one_and_names_the_device(torch_cuda: str) -> None:
    torch._dynamo.reset()
    graphs: list[Any] = []
    compiled = torch.compile(_body, backend=_counting(graphs), fullgraph=True)
    x, w = torch.randn(8, 16, device="cuda"), torch.randn(16, 4, device="cuda")
    for _ in range(3):
        compiled(x, w)
    assert len(graphs) == 1  # traced once, its guards held on the next calls
    devices = [n.kwargs["device"] for n in graphs[0].graph.nodes if "device" in n.kwargs]
    assert devices == [torch.device("cuda", 0)]
    torch._dynamo.reset()


def test_the_current_stream_is_read_inside_a_whole_graph(torch_cuda: str) -> None:
    torch._dynamo.reset()

    def f(x: torch.Tensor) -> torch.Tensor:
        stream = torch.cuda.current_stream()
        return x * 2 if stream is not None else x

    x = torch.ones(4, device="cuda")
    out = torch.compile(f, backend="eager", fullgraph=True)(x)
    assert out.device == torch.device("cuda", 0) and out.cpu().tolist() == [2.0] * 4
    torch._dynamo.reset()


def test_a_compiled_function_captured_in_a_graph_replays_on_new_inputs(torch_cuda: str) -> None:
    torch._dynamo.reset()
    compiled = torch.compile(_body, backend="aot_eager", fullgraph=True)
    x, w = torch.randn(8, 16, device="cuda"), torch.randn(16, 4, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            compiled(x, w)  # compiled and warmed up before the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = compiled(x, w)
    x.copy_(torch.randn(8, 16, device="cuda"))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.allclose(out.cpu(), _body(x, w).cpu(), atol=1e-5)
    torch._dynamo.reset()


def test_torch_device_is_torchs_device_class_by_equality_and_hash(torch_cuda: str) -> None:
    real = type(torch.ones(1, device="cuda").device)
    assert torch.device == real and not torch.device != real
    assert hash(torch.device) == hash(real)
    assert {torch.device: "found"}[real] == "found" and real in {torch.device}


def test_torch_accelerators_current_stream_is_its_own_function(torch_cuda: str) -> None:
    if not hasattr(torch, "accelerator"):
        pytest.skip("this torch has no torch.accelerator")
    assert torch.accelerator.current_stream is not torch.cuda.current_stream
    # The same stream: its id. Not ``==``: on a GPU the accelerator's is a generic torch.Stream, which a torch.cuda
    # stream's __eq__ never equals (H100, sessions 22 and 23); so on the emulator (test_a_generic_stream_is_its_own_...).
    assert torch.accelerator.current_stream().stream_id == torch.cuda.current_stream().stream_id


def _child(code: str) -> str:
    """``code`` run in a fresh interpreter, emulated as this test is (a child of the emulated arm starts emulated);
    its last line of output. A crash of torch's C++ (an abort) is a failure here, not the end of the test session."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_dynamo_first_imported_on_the_device_compiles_a_whole_graph(torch_cuda: str) -> None:
    """dynamo first imported while the device is on builds its tables from what torch's names are then."""
    code = ("import sys, torch\n"
            "assert 'torch._dynamo' not in sys.modules\n"
            "x = torch.ones(4, device='cuda')\n"
            "plus_ones = lambda t: t + torch.ones(4, device=t.device)\n"
            "out = torch.compile(plus_ones, backend='aot_eager', fullgraph=True)(x)\n"
            "print(out.device, out.cpu().tolist())\n")
    assert _child(code) == "cuda:0 [2.0, 2.0, 2.0, 2.0]"


def test_a_compiled_module_whose_weights_require_grad_runs_and_backpropagates(torch_cuda: str) -> None:
    """A module's weights require grad: the frame compiles with its backward, in a fresh process (the first backward
    there is the traced one), and the values and the gradients are the GPU's
    (``test_torch_compile_trains_device_tensors_that_require_grad.py`` has the rest)."""
    code = ("import torch\n"
            "torch.manual_seed(0)\n"
            "lin = torch.nn.Linear(4, 3).cuda()\n"
            "x = torch.ones(2, 4, device='cuda')\n"
            "out = torch.compile(lin)(x)\n"
            "out.sum().backward()\n"
            "eager = lin(x)\n"
            "print(out.device, torch.allclose(out, eager), lin.weight.grad.device, lin.weight.grad.cpu().tolist())\n")
    assert _child(code) == "cuda:0 True cuda:0 " + str([[2.0] * 4] * 3)


def test_after_the_emulation_a_whole_graph_on_the_cpu_compiles_with_torchs_own_functions() -> None:
    """dynamo's tables built inside the emulation hold its replacements; outside it they are torch's again."""
    from seam.torch_cuda import emulate_cuda

    torch._dynamo.reset()
    with emulate_cuda():
        on_device = torch.compile(_body, backend="eager", fullgraph=True)
        on_device(torch.randn(8, 16, device="cuda"), torch.randn(16, 4, device="cuda"))
    torch._dynamo.reset()
    x, w = torch.randn(8, 16), torch.randn(16, 4)
    out = torch.compile(_body, backend="aot_eager", fullgraph=True)(x, w)
    assert out.device == torch.device("cpu") and torch.allclose(out, _body(x, w), atol=1e-5)
    torch._dynamo.reset()
