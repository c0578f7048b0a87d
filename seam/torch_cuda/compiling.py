"""``torch.compile`` over the emulated device: what torch's compiler reads of CUDA, answered as the emulation is.

torch.compile skips every frame while a dispatch mode is on the stack, unless the mode asks to be left out of
compilation (``ignore_compile_internals``): the device mode does (``DeviceMode``), so dynamo traces the user's
code as on a GPU build, with the mode off while it compiles and on again while the compiled code runs. Tracing
makes fake tensors; a device tensor's fake says ``cuda:0`` (its ``device`` reads the storage's kind), so the
traced graph names the device as a GPU build's does.

A device tensor that requires grad (a module's parameters, by default) traces too: a CPU-only build of torch once
aborted the whole process (C++ ``terminate``: "PyTorch is not linked with support for cuda devices") when autograd
or functionalization met a fake CUDA tensor that requires grad; the CUDA device guard the emulation gives a CPU-only
torch (``device_guard.py``) ends the abort, and a backward traced on fake device tensors runs with CUDA built
(``accelerator_hooks.py``: autograd's engine asks the accelerator for a fake gradient's stream). Where torch's hooks
cannot be reached (``accelerator_hooks.available()`` False), making such a fake is refused (``_from_real_tensor``)
with dynamo's ``Unsupported`` that skips the frame: it runs as written, uncompiled, and ``fullgraph=True`` raises
that error, naming the tensor.

A fake tensor mode decides whether a CUDA runtime is there (``avoid_device_init``) from
``torch.cuda.is_available()``, which is True here; there is none, so it is told the truth: it must not run a
constant's real kernel on "cuda" (``FakeTensorMode.avoid_device_init`` is True under the emulation). Nor does a
fake CUDA tensor initialise a CUDA context (``fake_tensor.init_gpu_context`` makes a real one-element tensor on the
device while CUDA is said to be available): on a CUDA build of torch on a machine without a GPU, PyPI's default
build, that asks the real runtime for a driver that is not there ("Found no NVIDIA driver on your system").

dynamo looks torch's functions up by identity in tables it builds once, on first use, from the names torch has
then (which function is an in-graph torch function, which has a handler of its own): built inside the emulation
they hold its replacements, built outside torch's own. So the tables are forgotten on the way in and on the way out
(``forget_what_dynamo_looked_up``) and built again from the names of the moment; code dynamo has compiled is kept.

The emulation's own Python runs where a GPU build runs C++ (a factory, ``Tensor.to``, the device mode's dispatch of
every operation). dynamo tries to compile each frame that starts under a compiled call that it could not trace
whole, so those frames would be compiled too, with graphs a GPU build never makes; each such code object is marked
for dynamo to run as it is, and whatever it calls with it (``run_as_written``, on the way in).

Inductor, torch.compile's default compiler, writes Triton kernels for a CUDA graph, and a CPU-only machine has no
Triton: a graph with an input on the device is compiled as ``aot_eager`` compiles it instead (the same graph, its
aten operations run one by one under the device mode, values equal to rounding), and with ``mode="reduce-overhead"``
as the ``cudagraphs`` backend does (that graph in torch's CUDA graph trees: ``graph_trees.py``). What inductor's own
kernels do is not modelled (docs/torch-cuda.md, known gaps); a graph on the host still goes to inductor.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Iterable, Iterator

import torch
from torch._subclasses import fake_tensor
from torch._subclasses.fake_tensor import FakeTensorConverter, FakeTensorMode

from seam.torch_cuda import accelerator_hooks
from seam.torch_cuda.kinds import is_device

_INDUCTOR = torch._TorchCompileInductorWrapper
_inductor_call = _INDUCTOR.__call__
_from_real = FakeTensorConverter.from_real_tensor
#: What ``fullgraph=True`` says of a device tensor that requires grad (the module docstring says why).
REQUIRES_GRAD = ("seamgate's CUDA emulator: torch.compile cannot trace a device tensor that requires grad without a "
                 "GPU where torch's CUDA hooks cannot be reached (autograd's engine asks the accelerator for a fake "
                 "gradient's stream; seam/torch_cuda/accelerator_hooks.py); the frame runs uncompiled. Give the "
                 "tensor requires_grad=False (as engines' weights have) to compile it")


def _from_real_tensor(self: Any, fake_mode: Any, t: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
    """torch's conversion of a real tensor to a fake one, refused for a device tensor that requires grad where
    autograd's engine cannot be told that CUDA is built (``accelerator_hooks.available``)."""
    if t.requires_grad and is_device(t) and not accelerator_hooks.available():
        from torch._dynamo.exc import Unsupported

        message = f"{REQUIRES_GRAD}: {tuple(t.shape)} {t.dtype}"
        try:
            refusal = Unsupported(message, "seamgate: device tensor requires grad", skip_frame=True)
        except TypeError:  # a torch whose Unsupported takes the message alone
            refusal = Unsupported(message)
        raise refusal
    return _from_real(self, fake_mode, t, *args, **kwargs)


def _no_cuda_runtime(self: FakeTensorMode) -> bool:
    return True


def _no_gpu_context(device: torch.device) -> None:
    """``fake_tensor.init_gpu_context``: the emulated device has no CUDA context to initialise."""


def _on_device(example_inputs: Any) -> bool:
    return any(isinstance(t, torch.Tensor) and t.device.type == "cuda" for t in example_inputs)


def _inductor_or_aot_eager(self: Any, model_: Any, inputs_: Any, **kwargs: Any) -> Any:
    """``torch.compile``'s inductor: a graph with an input on the device is compiled as ``aot_eager`` compiles it, in
    a CUDA graph tree where the mode asks for one (``reduce-overhead``: the ``cudagraphs`` backend), unless inductor
    would make none for it: ``torch.cond`` or ``while_loop`` on device tensors (logged and counted as inductor does,
    ``counters["inductor"]["cudagraph_skips"]``)."""
    if not _on_device(inputs_):
        return _inductor_call(self, model_, inputs_, **kwargs)
    wants_trees = {**getattr(self, "config", {}), **(kwargs.get("config_patches") or {})}.get("triton.cudagraphs")
    control_flow = _control_flow_on_device(model_) if wants_trees else None
    if control_flow is not None:  # inductor's lowering of it disables CUDA graphs for the graph, and says so
        from torch._inductor.cudagraph_utils import log_cudagraph_skip_and_bump_counter

        log_cudagraph_skip_and_bump_counter(f"skipping cudagraphs due to {control_flow}")
    elif wants_trees:
        from torch._dynamo.backends.cudagraphs import cudagraphs
        from torch._inductor import cudagraph_trees

        # The cudagraphs backend binds the tree's entry point as it starts (an import in its body): for this call
        # it binds inductor's way of making a tree instead (``_made_at_first_call``).
        tree_of = cudagraph_trees.cudagraphify_impl
        cudagraph_trees.cudagraphify_impl = _made_at_first_call(tree_of)
        try:
            return cudagraphs(model_, inputs_)
        finally:
            cudagraph_trees.cudagraphify_impl = tree_of
    from torch._dynamo.backends.debugging import aot_eager

    return aot_eager(model_, inputs_)


def _control_flow_on_device(model: Any) -> str | None:
    """Inductor's reason to make no CUDA graph of a graph whose ``torch.cond`` or ``while_loop`` takes device tensors
    (its lowerings set ``disable_cudagraphs_reason`` so, in torch 2.11 and 2.13 alike), in its words; else None."""
    graph = getattr(model, "graph", None)
    for node in graph.nodes if graph is not None else ():
        if node.op != "call_function":
            continue
        if node.target is torch.ops.higher_order.cond:
            name, tensors = "torch.cond", [node.args[0], *node.args[3]]
        elif node.target is torch.ops.higher_order.while_loop:
            name, tensors = "torch.while_loop", [*node.args[2], *node.args[3]]
        else:
            continue
        metas = [getattr(t, "meta", {}) for t in tensors]
        values = [meta.get("val", meta.get("example_value")) for meta in metas]  # AOT's name, dynamo's
        if any(isinstance(v, torch.Tensor) and v.device.type == "cuda" for v in values):
            trace = node.meta.get("stack_trace")
            return f"control flow operator: {name}." + (f" Found from : \n {trace}" if trace else "")
    return None


def _made_at_first_call(tree_of: Any) -> Any:
    """Make a compiled function's graph tree as inductor does (``compile_fx.cudagraphify``): at its first call, from
    that call's real inputs. torch's ``cudagraphs`` backend makes it at compile time from the compile's inputs, whose
    sizes are symbols where the function is dynamic, so the tree keys no graph by size, and a call of another size
    replays the graph of the first (its inputs copied into buffers of the first size: "The size of tensor a (4) must
    match the size of tensor b (6)"); inductor's tree keys one graph per size (``scripts/graph_trees_probe.py``)."""
    def make(model: Any, inputs: Any, static_input_idxs: Any, *args: Any, **kwargs: Any) -> Any:
        made: list[Any] = []

        def run(new_inputs: Any) -> Any:
            if not made:
                made.append(tree_of(model, new_inputs, static_input_idxs, *args, **kwargs))
            return made[0](new_inputs)

        run._boxed_call = True  # type: ignore[attr-defined]
        return run

    return make


def patches() -> list[tuple[Any, str, Any]]:
    """(owner, name, replacement) for the installation."""
    out: list[tuple[Any, str, Any]] = [(_INDUCTOR, "__call__", _inductor_or_aot_eager),
                                       (FakeTensorConverter, "from_real_tensor", _from_real_tensor)]
    if isinstance(FakeTensorMode.__dict__.get("avoid_device_init"), property):  # an attribute in older torch
        out.append((FakeTensorMode, "avoid_device_init", property(_no_cuda_runtime)))
    if hasattr(fake_tensor, "init_gpu_context"):
        out.append((fake_tensor, "init_gpu_context", _no_gpu_context))
    return out


_EVAL_FRAME = getattr(torch._C._dynamo, "eval_frame", None)
#: dynamo runs a code object so marked, and every frame it calls, as written (None: a torch without the marks).
_AS_WRITTEN = (_EVAL_FRAME._FrameExecStrategy(_EVAL_FRAME._FrameAction.SKIP, _EVAL_FRAME._FrameAction.SKIP)
               if hasattr(_EVAL_FRAME, "set_code_exec_strategy") else None)


def _codes(value: Any) -> Iterator[types.CodeType]:
    """The code objects of a function, a property's getter and setter, or a class's own functions."""
    if isinstance(value, property):
        for part in (value.fget, value.fset):
            yield from _codes(part)
    elif isinstance(value, (staticmethod, classmethod)):
        yield from _codes(value.__func__)
    elif isinstance(value, types.FunctionType):
        yield value.__code__
    elif isinstance(value, type) and _ours(value):
        for member in vars(value).values():
            yield from _codes(member)


def _ours(cls: type) -> bool:
    """Whether the emulator wrote ``cls`` (some of its classes name torch's module, as the GPU's do)."""
    return any(getattr(member, "__module__", "").startswith("seam.") for member in vars(cls).values()
               if isinstance(member, types.FunctionType))


def run_as_written(values: Iterable[Any]) -> None:
    """Mark the code of ``values`` (and the device mode's dispatch) for dynamo to run, never to compile, with every
    frame they call: what is torch's C++ on a GPU build is never a frame dynamo compiles."""
    from seam.torch_cuda.dispatch import DeviceMode

    if _AS_WRITTEN is None:
        return
    for value in (*values, DeviceMode.__dict__["__torch_dispatch__"]):
        for code in _codes(value):
            _EVAL_FRAME.set_code_exec_strategy(code, _AS_WRITTEN)


def forget_what_dynamo_looked_up() -> None:
    """Drop dynamo's tables of torch's functions by identity (nothing to drop where dynamo is not imported)."""
    trace_rules = sys.modules.get("torch._dynamo.trace_rules")
    if trace_rules is not None:
        trace_rules.clear_lru_cache()
    variables = sys.modules.get("torch._dynamo.variables.torch")
    handlers = getattr(getattr(variables, "TorchInGraphFunctionVariable", None), "_get_handlers", None)
    if handlers is not None and hasattr(handlers, "cache_clear"):
        handlers.cache_clear()
