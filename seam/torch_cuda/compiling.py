"""``torch.compile`` over the emulated device: what torch's compiler reads of CUDA, answered as the emulation is.

torch.compile skips every frame while a dispatch mode is on the stack, unless the mode asks to be left out of
compilation (``ignore_compile_internals``): the device mode does (``DeviceMode``), so dynamo traces the user's
code as on a GPU build, with the mode off while it compiles and on again while the compiled code runs. Tracing
makes fake tensors; a device tensor's fake says ``cuda:0`` (its ``device`` reads the storage's kind), so the
traced graph names the device as a GPU build's does.

A fake tensor mode decides whether a CUDA runtime is there (``avoid_device_init``) from
``torch.cuda.is_available()``, which is True here; there is none, so it is told the truth: it must not run a
constant's real kernel on "cuda" (``FakeTensorMode.avoid_device_init`` is True under the emulation).

dynamo looks torch's functions up by identity in tables it builds once, on first use, from the names torch has
then (which function is an in-graph torch function, which has a handler of its own): built inside the emulation
they hold its replacements, built outside torch's own. So the tables are forgotten on the way in and on the way out
(``forget_what_dynamo_looked_up``) and built again from the names of the moment; code dynamo has compiled is kept.

Inductor, torch.compile's default compiler, writes Triton kernels for a CUDA graph, and a CPU-only machine has no
Triton: a graph with an input on the device is compiled as ``aot_eager`` compiles it instead (the same graph, its
aten operations run one by one under the device mode, values equal to rounding). What inductor's own kernels and
``mode="reduce-overhead"``'s CUDA graph trees do is not modelled (docs/torch-cuda.md, known gaps); a graph on the
host still goes to inductor.
"""

from __future__ import annotations

import sys
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

_INDUCTOR = torch._TorchCompileInductorWrapper
_inductor_call = _INDUCTOR.__call__


def _no_cuda_runtime(self: FakeTensorMode) -> bool:
    return True


def _on_device(example_inputs: Any) -> bool:
    return any(isinstance(t, torch.Tensor) and t.device.type == "cuda" for t in example_inputs)


def _inductor_or_aot_eager(self: Any, model_: Any, inputs_: Any, **kwargs: Any) -> Any:
    """``torch.compile``'s inductor: a graph with an input on the device is compiled as ``aot_eager`` compiles it."""
    if not _on_device(inputs_):
        return _inductor_call(self, model_, inputs_, **kwargs)
    from torch._dynamo.backends.debugging import aot_eager

    return aot_eager(model_, inputs_)


def patches() -> list[tuple[Any, str, Any]]:
    """(owner, name, replacement) for the installation."""
    return [(FakeTensorMode, "avoid_device_init", property(_no_cuda_runtime)),
            (_INDUCTOR, "__call__", _inductor_or_aot_eager)]


def forget_what_dynamo_looked_up() -> None:
    """Drop dynamo's tables of torch's functions by identity (nothing to drop where dynamo is not imported)."""
    trace_rules = sys.modules.get("torch._dynamo.trace_rules")
    if trace_rules is not None:
        trace_rules.clear_lru_cache()
    variables = sys.modules.get("torch._dynamo.variables.torch")
    handlers = getattr(getattr(variables, "TorchInGraphFunctionVariable", None), "_get_handlers", None)
    if handlers is not None and hasattr(handlers, "cache_clear"):
        handlers.cache_clear()
