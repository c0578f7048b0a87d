"""What dynamo runs on real tensors while it compiles (``verify_correctness``) is device work, as on a GPU.

dynamo compiles with every dispatch mode off, and under ``verify_correctness`` it runs the graph and the backend's
result on copies of the real inputs right there. On a GPU the first matrix product there makes the thread's cuBLAS
handle; emulated, with the device mode off, it made none, so a CUDA graph tree recording at the next call made the
first handle inside its capture, which CUDA refuses ("operation failed due to a previous error during capture"),
where the H200 trains on (``scripts/verify_correctness_probe.py matmul``, session 33).
``seam/torch_cuda/compile_time_runs.py`` runs that check under the device mode; dynamo is imported by few programs
and costs a second, so the replacement is made as it is imported (``seam/torch_cuda/on_import.py``).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Callable

import pytest
import torch
import torch._dynamo
import torch._dynamo.output_graph

from seam.cuda_backend import end_generator_capture
from seam.torch_cuda import emulate_cuda, on_import
from tests.torch_cuda.training_steps import train

ROOT = Path(__file__).resolve().parents[2]
#: The models of ``scripts/verify_correctness_probe.py``.
MODELS: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "sum": lambda x, y: ((x + y) * y).sum(),
    "mean": lambda x, y: (x * y).pow(2).mean(),
    "factory": lambda x, y: (torch.zeros(3, device="cuda").add_(3) * x * y).sum(),
    "matmul": lambda x, y: torch.nn.functional.gelu(x.view(3, 1) @ y.view(1, 3)).pow(2).mean(),
}


def _steps(step: Callable[..., torch.Tensor]) -> list[list[float]]:
    """The gradient after each training step from the probe's start."""
    y = torch.tensor([1.5, 0.25, -2.0], device="cuda")
    return train(step, torch.tensor([0.5, -1.0, 2.0], device="cuda", requires_grad=True), y)


@pytest.mark.parametrize("model", MODELS)
def test_verified_training_steps_in_a_graph_tree_give_eagers_gradients(torch_cuda: str, model: str) -> None:
    """The ``cudagraphs`` backend records the forward and the backward in a CUDA graph tree at the call after the
    compile-time check; a matrix product's first cuBLAS handle was made by that check on a GPU (so the compiled steps
    run first: eager's product would make the handle)."""
    torch._dynamo.reset()
    try:
        with torch._dynamo.config.patch(verify_correctness=True):
            got = _steps(torch.compile(MODELS[model], backend="cudagraphs"))
    except RuntimeError as err:  # a recording refused: its capture ended as a test ends one CUDA refused, then red
        torch._dynamo.reset()
        end_generator_capture(torch.device("cuda", 0))
        pytest.fail(f"the compiled steps stopped: {type(err).__name__}: {err}")
    want = _steps(MODELS[model])
    assert torch.allclose(torch.tensor(got), torch.tensor(want), atol=1e-6), (got, want)
    torch._dynamo.reset()


def test_the_check_runs_under_the_device_mode_and_the_backend_compiles_with_every_mode_off() -> None:
    """What the check's run sees is the emulated device (a device result is ``cuda:0``); the backend is handed fakes
    to compile, with no mode on, as dynamo compiles."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    seen: dict[str, object] = {}

    def backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., object]:
        seen["modes while compiling"] = list(_get_current_dispatch_mode_stack())

        def run(*args: torch.Tensor) -> object:
            seen.setdefault("first run", torch.ones(1, device="cuda").mul(2).device)
            return gm.forward(*args)
        return run

    with emulate_cuda():
        torch._dynamo.reset()
        x = torch.ones(3, device="cuda")
        with torch._dynamo.config.patch(verify_correctness=True):
            out = torch.compile(lambda t: t * 2 + 1, backend=backend)(x)
        assert out.tolist() == [3.0, 3.0, 3.0]
        torch._dynamo.reset()
    assert seen["modes while compiling"] == []
    assert seen["first run"] == torch.device("cuda", 0)


def test_dynamos_wrapper_is_replaced_while_emulating_and_torchs_own_after() -> None:
    wrapper = torch._dynamo.output_graph.WrapperBackend
    own = wrapper.__call__
    with emulate_cuda():
        assert wrapper.__call__ is not own
        assert wrapper.__call__.__module__ == "seam.torch_cuda.compile_time_runs"
    assert wrapper.__call__ is own


def test_imported_inside_the_emulation_dynamo_is_replaced_then_and_put_back_at_the_end() -> None:
    """A program that imports dynamo only inside the emulation (most do, if any): the import finder makes the
    replacement as the module loads, and leaves ``sys.meta_path`` at the end."""
    script = textwrap.dedent("""
        import sys
        import seam
        assert "torch._dynamo.output_graph" not in sys.modules
        finders = list(sys.meta_path)
        with seam.emulate_cuda():
            import torch._dynamo.output_graph as og
            inside = og.WrapperBackend.__call__.__module__
        print(inside, og.WrapperBackend.__call__.__module__, sys.meta_path == finders)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "SEAM_EMULATE_CUDA": "0"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["seam.torch_cuda.compile_time_runs", "torch._dynamo.output_graph", "True"]


def test_on_import_replaces_in_a_module_loaded_already_or_later(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("seamgate_watched_now", "seamgate_watched_later"):
        (tmp_path / f"{name}.py").write_text("VALUE = 'own'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import seamgate_watched_now  # noqa: F401 (loaded before the watch)

    made: list[tuple[object, str, object]] = []

    def replace(patches: object) -> None:
        for owner, name, value in patches:  # type: ignore[attr-defined]
            made.append((owner, name, value))
            setattr(owner, name, value)

    wanted = {name: (lambda module: [(module, "VALUE", "replaced")])
              for name in ("seamgate_watched_now", "seamgate_watched_later")}
    try:
        on_import.watch(wanted, replace)
        assert [m.__name__ for m, _, _ in made] == ["seamgate_watched_now"]
        import seamgate_watched_later
        assert seamgate_watched_later.VALUE == "replaced"
        assert [m.__name__ for m, _, _ in made] == ["seamgate_watched_now", "seamgate_watched_later"]
    finally:
        on_import.stop()
        for name in wanted:
            sys.modules.pop(name, None)
    assert not any(type(f).__module__ == on_import.__name__ for f in sys.meta_path)
