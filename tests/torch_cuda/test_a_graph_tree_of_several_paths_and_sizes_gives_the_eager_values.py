"""A CUDA graph tree (``torch.compile(mode="reduce-overhead")``) of several paths and sizes gives the eager values at
every step, as on the H100 (torch 2.11, session 23: ``scripts/graph_trees_probe.py``,
``evidence/h100-graph-trees-probe-d6f6930.jsonl``: every call right).

Before, the emulator refused a later step's output with the tree's "accessing tensor output of CUDAGraphs that has
been overwritten by a subsequent run" (a block the tree took back kept its last owner's mark; the storages the tree
rebuilt from addresses never owned their blocks, so a recording took a live output's block), replayed the first
size's graph for a dynamic function's other sizes ("The size of tensor a (4) must match the size of tensor b (6)"),
and once wrote one output over another.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest
import torch

from tests.torch_cuda.tree_functions import eager_functions


@pytest.fixture
def functions(torch_cuda: str) -> Iterator[tuple[tuple[Callable[..., Any], ...], tuple[Callable[..., Any], ...]]]:
    torch._dynamo.reset()
    eager = eager_functions()
    yield eager, tuple(torch.compile(f, mode="reduce-overhead") for f in eager)
    torch._dynamo.reset()


def _right(got: torch.Tensor, want: torch.Tensor) -> bool:
    return bool(torch.allclose(got.cpu(), want.cpu(), atol=1e-4))


def test_a_tree_of_two_paths_gives_each_steps_values(functions: Any) -> None:
    (f1, f2, f3), (c1, c2, c3) = functions
    with torch.inference_mode():
        for step in range(8):
            torch.compiler.cudagraph_mark_step_begin()
            x = torch.randn(4, 8, device="cuda")
            second, eager_second = (c2, f2) if step % 2 == 0 else (c3, f3)
            assert _right(second(c1(x)), eager_second(f1(x))), step


@pytest.mark.parametrize("chained", [False, True], ids=["one-function", "two-functions"])
def test_a_function_called_with_two_sizes_gives_each_sizes_values(functions: Any, chained: bool) -> None:
    (f1, f2, _), (c1, c2, _) = functions
    with torch.inference_mode():
        for n in (4, 6, 4, 6, 4, 6, 5):
            torch.compiler.cudagraph_mark_step_begin()
            x = torch.randn(n, 8, device="cuda")
            got, want = (c2(c1(x)), f2(f1(x))) if chained else (c1(x), f1(x))
            assert got.shape == (n, 8) and _right(got, want), n
