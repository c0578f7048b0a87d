"""PyPI's default torch is a CUDA build; on a CI machine without a GPU its CUDA functions ask a driver that is not
there. Inside ``emulate_cuda()`` the emulated device answers instead, as it does on a CPU-only build.

Measured on this machine with torch 2.11.0+cu130 from PyPI (the H200's release; session 22): ``tests/torch_cuda``,
``tests/subjects`` and ``tests/seam`` ran 878 passed and 27 failed before the emulator answered these three, each
with the driver's refusal ("Found no NVIDIA driver on your system", ``cudaErrorInsufficientDriver``) or a crash:
- a fake CUDA tensor (torch.compile's tracing) initialises a CUDA context: a real one-element tensor on the device;
- the CUDA graph trees ask ``torch._C``'s allocator about their pool (a segmentation fault on such a build);
- cuda-python, which such a build installs, was found before the emulator's ``cuda.bindings.runtime``;
- ``torch.cuda.device(i)`` exchanges the device in C++, and an RNN's ``flatten_parameters`` calls the build's
  ``_cudnn_rnn_flatten_weight``, which has no kernel for the host memory under a device tensor. Until session 42 cuDNN
  was off inside the emulation on such a build (PyTorch's ``TEST_CUDNN`` cases skipped there); now cuDNN stays on, as
  on a GPU, and ``torch._use_cudnn_rnn_flatten_weight()`` answers False inside, as a CPU-only build answers it.

These cases plant what such a build has where this machine's torch lacks it: each planted function refuses as the
driver does, so a case is red wherever the emulation lets one be called. (The third has its own case, with an
installed cuda-python, in ``test_cuda_bindings_reads_a_captured_graphs_nodes_as_cudas.py``.)
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
import torch
from torch._subclasses import fake_tensor

from seam.torch_cuda import emulate_cuda

NO_DRIVER = "Found no NVIDIA driver on your system"
#: ``torch._C``'s functions the graph trees call on a CUDA build (a CPU-only build lacks them).
TREE_FUNCTIONS = ("_cuda_checkPoolLiveAllocations", "_cuda_getCheckpointState", "_cuda_setCheckpointPoolState",
                  "_cuda_isHistoryEnabled", "_set_storage_access_error_msg", "_tensors_data_ptrs_at_indices_equal",
                  "_has_Standard_Deleter", "_free_And_Remove_DeleterFn")


def _no_driver(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError(f"{NO_DRIVER}. Please check that you have an NVIDIA GPU and installed a driver")


@pytest.fixture
def cuda_build(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """torch as a CUDA build without a GPU has it: the planted functions refuse as its driver does."""
    monkeypatch.setattr(fake_tensor, "init_gpu_context", _no_driver)
    for name in TREE_FUNCTIONS:
        monkeypatch.setattr(torch._C, name, _no_driver, raising=False)
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_torch_compile_traces_a_whole_graph_on_the_device_without_a_cuda_context(cuda_build: None) -> None:
    def body(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x * 2) + 1

    with emulate_cuda():
        x = torch.randn(4, 8, device="cuda")
        out = torch.compile(body, backend="aot_eager", fullgraph=True)(x)
        assert out.device == torch.device("cuda", 0)
        assert torch.allclose(out.cpu(), body(x).cpu(), atol=1e-6)
    assert fake_tensor.init_gpu_context is _no_driver  # the build's own again after the emulation


def test_a_cuda_graph_tree_records_and_replays_with_the_emulators_allocator_answers(cuda_build: None) -> None:
    with emulate_cuda():
        model = torch.nn.Linear(8, 4).cuda().requires_grad_(False)
        compiled = torch.compile(model, mode="reduce-overhead")
        with torch.inference_mode():
            for _ in range(4):  # a warm-up, a recording, then replays
                x = torch.randn(3, 8, device="cuda")
                assert torch.allclose(compiled(x).cpu(), model(x).cpu(), atol=1e-5)
    assert all(getattr(torch._C, name) is _no_driver for name in TREE_FUNCTIONS)


def _cudnn_of_a_cuda_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """What such a build has: cuDNN compiled in and loadable, its RNN weights flattened by a cuDNN kernel (which host
    memory cannot reach: planted refusing)."""
    monkeypatch.setattr(torch._C, "_has_cudnn", True)
    module = getattr(torch.backends.cudnn, "m", torch.backends.cudnn)  # the namespace ``is_acceptable`` reads
    monkeypatch.setattr(module, "is_available", lambda: True)
    monkeypatch.setattr(module, "_init", lambda: True)
    monkeypatch.setattr(torch, "_use_cudnn_rnn_flatten_weight", lambda: True)
    monkeypatch.setattr(torch, "_cudnn_rnn_flatten_weight", _no_driver)


def test_the_device_context_and_an_rnn_run_on_the_device_with_cudnn_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "_exchange_device", _no_driver)
    monkeypatch.setattr(torch.cuda, "_maybe_exchange_device", _no_driver)
    _cudnn_of_a_cuda_build(monkeypatch)
    planted = torch._use_cudnn_rnn_flatten_weight
    torch.manual_seed(0)
    lstm, x = torch.nn.LSTM(8, 8, 2), torch.randn(3, 2, 8)
    want, _ = lstm(x)
    with emulate_cuda():
        assert torch.backends.cudnn.enabled is True
        assert torch.backends.cudnn.is_acceptable(torch.ones(2, device="cuda"))  # PyTorch's TEST_CUDNN
        with torch.cuda.device(0):
            assert torch.cuda.current_device() == 0
        got, _ = lstm.cuda()(x.cuda())
        assert got.device == torch.device("cuda", 0)
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-6)
    assert torch.backends.cudnn.enabled is True
    assert torch._use_cudnn_rnn_flatten_weight is planted  # the build's own again after the emulation


def test_cudnn_stays_on_where_torchs_flags_are_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyTorch's test base freezes the cuDNN flags (``disable_global_flags()``): the emulation sets none of them."""
    _cudnn_of_a_cuda_build(monkeypatch)
    # what disable_global_flags() does, undone after the case (the flag is a global of torch.backends' own module)
    monkeypatch.setitem(torch.backends.flags_frozen.__globals__, "__allow_nonbracketed_mutation_flag", False)
    assert torch.backends.flags_frozen()
    with emulate_cuda():
        assert torch.backends.cudnn.enabled is True
    assert torch.backends.cudnn.enabled is True
