"""Autograd's stream semantics on the emulated device: each backward node runs on the stream its forward ran on.

CUDA's autograd engine gives every node the stream that was current when the node was made (a leaf's gradient
accumulator: the stream of the leaf's first use), makes that stream current while the node runs, has a node's stream
wait on the streams that produced its gradients (the caller's stream for the roots), and at the end has the caller's
stream wait on the streams that ran, before the final callbacks (``queue_callback``) run there ("Stream semantics of backward passes" in
torch's CUDA notes). A CPU-only torch's engine knows only the CPU's stream, so a custom ``backward`` that asks
``torch.cuda.current_stream()`` read the caller's stream here where a GPU gives its forward's, and a backward node
on a side stream forked nothing into a capture.

How: ``Runtime.set_current`` keeps, per thread, the sequence number autograd's next node would take at each change
of stream (``runtime._note_switch``), so a node's stream is read from its own ``_sequence_nr()`` after the fact, and
the forward pays nothing. A backward (torch's ``_engine_run_backward``, which ``Tensor.backward``,
``torch.autograd.backward`` and ``torch.autograd.grad`` call) walks the graph from its roots and hooks each node with
a pre-hook that makes its stream current and waits; the hooks go when the backward ends. A thread that never made a
stream other than the default one current, backwarding on the default stream, runs torch's engine untouched.

Not modelled: a hook registered on a non-leaf tensor runs before its node's pre-hook, so it sees the stream of the
node that ran before (a leaf's hooks are put after a hook of ours that sets the stream); a leaf first used on the
default stream and then on a side stream in one graph takes the side stream's first consumer if that consumer was
made first; a node made in another thread than the backward's is read against the backward thread's switches.
"""

from __future__ import annotations

import bisect
import threading
from typing import Any, Callable

import torch
import torch.autograd
import torch.autograd.graph

from seam.torch_cuda import accelerator_hooks, tensor_methods
from seam.torch_cuda.runtime import runtime

#: torch's own, taken before any emulation replaces the names.
TORCH_RUN_BACKWARD: Callable[..., Any] = torch.autograd.graph._engine_run_backward
#: An AccumulateGrad node's sequence number: the largest, so that the engine runs it as soon as it is ready.
_ACCUMULATOR_SEQ = (1 << 64) - 1
#: The key of the stream-setting hook put first among a leaf's own hooks (torch's handles count up from 0).
_FIRST = -1


class _Backward:
    """One backward's plan: each node's stream, the streams whose gradients it takes, and the hooks to take off."""

    def __init__(self, rt: Any, ambient: Any) -> None:
        self.rt, self.ambient = rt, ambient
        self.stream: dict[Any, Any] = {}
        self.producers: dict[Any, set[Any]] = {}
        self.ran: set[Any] = set()
        self.handles: list[Any] = []
        self.leaf_hooks: list[dict[Any, Any]] = []

    def stream_of(self, seq: int) -> Any:
        per_thread = self.rt.per_thread
        at = bisect.bisect_right(per_thread.switch_seqs, seq)
        return per_thread.switch_streams[at - 1] if at else self.rt.default_stream

    def walk(self, roots: list[Any]) -> None:
        """Every node reachable from ``roots``, its stream, and who hands it gradients (the roots: the caller)."""
        consumers: dict[Any, list[Any]] = {}
        todo = []
        for root in roots:
            self.producers.setdefault(root, set()).add(self.ambient)
            if root not in self.stream:
                self.stream[root] = None
                todo.append(root)
        while todo:
            node = todo.pop()
            for nxt, _ in node.next_functions:
                if nxt is None:
                    continue
                consumers.setdefault(nxt, []).append(node)
                if nxt not in self.stream:
                    self.stream[nxt] = None
                    todo.append(nxt)
        for node in self.stream:
            seq = node._sequence_nr()
            if seq != _ACCUMULATOR_SEQ:
                self.stream[node] = self.stream_of(seq)
        for node in self.stream:  # a leaf's accumulator: the stream of its first use (its earliest consumer)
            if self.stream[node] is None:
                users = consumers.get(node)
                self.stream[node] = (self.stream[min(users, key=lambda u: u._sequence_nr())] if users
                                     else self.ambient)
        for node, users in consumers.items():
            self.producers.setdefault(node, set()).update(self.stream[u] for u in users)

    def hook(self) -> None:
        for node in self.stream:
            enter = self._enter_for(node)
            self.handles.append(node.register_prehook(lambda grads, enter=enter: enter()))
            leaf = getattr(node, "variable", None)
            hooks = getattr(leaf, "_backward_hooks", None) if isinstance(leaf, torch.Tensor) else None
            if hooks:  # a leaf's own hooks run before any pre-hook of its node: ours goes first among them
                items = list(hooks.items())
                hooks.clear()
                hooks[_FIRST] = lambda grad, enter=enter: enter()
                hooks.update(items)
                self.leaf_hooks.append(hooks)

    def _enter_for(self, node: Any) -> Callable[[], None]:
        stream, producers = self.stream[node], self.producers.get(node, ())

        def enter() -> None:
            if self.rt.current_stream() is not stream:
                self.rt.set_current(stream)
            for producer in producers:
                if producer is not stream:
                    stream.wait_stream(producer)
            self.ran.add(stream)
        return enter

    def leave(self) -> None:
        """The caller's stream current again, waiting on every stream a node ran on."""
        if self.rt.current_stream() is not self.ambient:
            self.rt.set_current(self.ambient)
        for stream in self.ran:
            if stream is not self.ambient:
                self.ambient.wait_stream(stream)
        self.ran.clear()

    def unhook(self) -> None:
        for handle in self.handles:
            handle.remove()
        for hooks in self.leaf_hooks:
            hooks.pop(_FIRST, None)
        self.handles.clear()
        self.leaf_hooks.clear()


class _Engine:
    """``Variable._execution_engine`` with the final callbacks a backward queues run on its caller's stream, after
    that stream waited on every stream a node ran on (``_Backward.leave``); everything else is torch's engine's."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine

    def queue_callback(self, callback: Callable[[], Any]) -> None:
        active = _active()
        plan = active[-1] if active else None

        def on_the_callers_stream() -> Any:
            if plan is not None:
                plan.leave()
            return callback()
        self._engine.queue_callback(on_the_callers_stream if plan is not None else callback)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


#: torch's engine, taken before any emulation replaces the name.
TORCH_ENGINE = torch.autograd.Variable._execution_engine
_LOCAL = threading.local()


def _active() -> list[_Backward]:
    """The plans of this thread's backwards running now, innermost last."""
    try:
        return _LOCAL.plans
    except AttributeError:
        _LOCAL.plans = []
        return _LOCAL.plans


def _roots(t_outputs: Any) -> list[Any]:
    roots = []
    for out in t_outputs:
        node = out.grad_fn if isinstance(out, torch.Tensor) else getattr(out, "node", None)
        if node is not None:
            roots.append(node)
    return roots


def run_backward(t_outputs: Any, *args: Any, **kwargs: Any) -> Any:
    """torch's ``_engine_run_backward`` with each node on its forward's stream (above); a backward of fake tensors
    (torch.compile tracing a training step) runs with CUDA built (``accelerator_hooks.py``)."""
    if tensor_methods.faking():
        with accelerator_hooks.cuda_is_built():
            return _run_backward(t_outputs, *args, **kwargs)
    return _run_backward(t_outputs, *args, **kwargs)


def _run_backward(t_outputs: Any, *args: Any, **kwargs: Any) -> Any:
    rt = runtime()
    per_thread = rt.per_thread
    ambient = rt.current_stream()
    if ambient is rt.default_stream and not per_thread.switch_seqs:
        return TORCH_RUN_BACKWARD(t_outputs, *args, **kwargs)
    plan = _Backward(rt, ambient)
    plan.walk(_roots(t_outputs))
    if all(stream is ambient for stream in plan.stream.values()):
        return TORCH_RUN_BACKWARD(t_outputs, *args, **kwargs)
    before = per_thread.stream
    plan.hook()
    _active().append(plan)
    try:
        return TORCH_RUN_BACKWARD(t_outputs, *args, **kwargs)
    finally:
        _active().remove(plan)
        plan.unhook()
        if plan.ran:
            plan.leave()
        rt.set_current(before)


def patches() -> list[tuple[Any, str, Any]]:
    """``torch.autograd``'s name and ``torch.autograd.graph``'s, as ``torch.compiler`` patches them."""
    return [(torch.autograd.graph, "_engine_run_backward", run_backward),
            (torch.autograd, "_engine_run_backward", run_backward),
            (torch.autograd.Variable, "_execution_engine", _Engine(TORCH_ENGINE))]
