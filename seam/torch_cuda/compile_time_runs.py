"""Real tensors dynamo runs while it compiles (``verify_correctness``): on the emulated device, as a GPU runs them.

dynamo compiles with every dispatch mode off (``convert_frame``: ``_disable_current_modes``), the device mode among
them. Under ``torch._dynamo.config.verify_correctness`` its ``WrapperBackend`` then runs real tensors right there:
it saves the graph's parameters, copies the graph, compiles the copy with the backend, and runs both the graph and
the backend's result on copies of the real inputs to compare them. On a GPU all of that but the backend's compile is
device work: the first matrix product makes the thread's cuBLAS handle and workspaces, and the copies and results
take device memory (what a CUDA graph tree does at that first call on a GPU was not measured). With the device mode off, the emulated device
saw none of it: the next call, a tree's recording, made the first cuBLAS handle inside its capture, which CUDA
refuses (and the emulator with it), where a GPU had made it at compile time (``scripts/verify_correctness_probe.py
matmul``: right on the H200, session 33; refused emulated before this module).

So while the emulation is on, ``WrapperBackend.__call__`` runs under the device mode, and the backend's compile
inside it with every mode off again, as dynamo compiles. dynamo's ``output_graph`` costs a second to import and most
programs never import it, so the replacement is made when dynamo is imported (``on_import.py``).
"""

from __future__ import annotations

import types
from typing import Any, Callable, Sequence

from torch.utils._python_dispatch import _disable_current_modes, _get_current_dispatch_mode_stack

MODULE = "torch._dynamo.output_graph"


def _on_the_device(torch_call: Callable[..., Any], mode: Any) -> Callable[..., Any]:
    def __call__(self: Any, gm: Any, example_inputs: Any) -> Any:
        if mode in _get_current_dispatch_mode_stack():  # called with the device mode on: nothing to put back
            return torch_call(self, gm, example_inputs)
        backend = self.backend

        def compile_with_modes_off(*args: Any, **kwargs: Any) -> Any:
            with _disable_current_modes():
                return backend(*args, **kwargs)

        self.backend = compile_with_modes_off
        try:
            with mode:
                return torch_call(self, gm, example_inputs)
        finally:
            self.backend = backend

    return __call__


def patches(mode: Any) -> dict[str, Callable[[types.ModuleType], Sequence[tuple[Any, str, Any]]]]:
    """For ``on_import.watch``: dynamo's verifying backend wrapper, run under ``mode`` (the device mode)."""
    def of(module: types.ModuleType) -> Sequence[tuple[Any, str, Any]]:
        wrapper = getattr(module, "WrapperBackend", None)
        if wrapper is None or "__call__" not in vars(wrapper):  # a torch without it: nothing to replace
            return []
        return [(wrapper, "__call__", _on_the_device(vars(wrapper)["__call__"], mode))]
    return {MODULE: of}
