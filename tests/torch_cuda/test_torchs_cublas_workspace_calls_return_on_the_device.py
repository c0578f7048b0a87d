"""``torch._C._cuda_clearCublasWorkspaces()``, ``_cuda_resetCublasWorkspaceSize()`` and (torch 2.13)
``_cuda_resetCublasLtWorkspaceSize()`` exist on a CUDA build and return: PyTorch's test helpers call them after every test that changes the BLAS backend
(``setBlasBackendsToDefaultFinally``, around ``test_repeat_graph_capture_cublas_workspace_memory``), and
code that frees cuBLAS workspaces before a capture calls the first. The emulated device has no
workspaces to free: both return.
"""

from __future__ import annotations

import torch


def test_clearing_and_resetting_the_cublas_workspaces_returns(torch_cuda: str) -> None:
    a = torch.ones(8, 8, device="cuda")
    torch.mm(a, a)  # makes this thread's cuBLAS handle and workspace on a GPU
    torch._C._cuda_clearCublasWorkspaces()
    # The resets are newer than torch 2.11 (the H200 at 84b227e has neither); the emulated device runs on
    # torch 2.13, whose test helpers call both.
    for reset in ("_cuda_resetCublasWorkspaceSize", "_cuda_resetCublasLtWorkspaceSize"):
        if torch_cuda == "cpu-emulated" or hasattr(torch._C, reset):
            getattr(torch._C, reset)()
    assert torch.mm(a, a).sum().item() == 512.0
