"""Emulated ``torch.cuda.CUDAGraph``: capture records the tensor operations, replay re-issues them.

The model of CUDA is the seam's emulator (``seam.emulator``): while a stream captures, the
operations issued on it (and on streams forked into it) are RECORDED by a ``CaptureRecorder``, the
memory they wrote is restored and the memory they made is poisoned at the end, so nothing appears
to have run; ``replay()`` re-issues them against the same buffers, so it recomputes from whatever
those buffers hold now. What CUDA refuses during a capture is refused with torch's words
(``seam.torch_cuda.cuda_errors``), and a refusal that invalidates the capture on a GPU makes its
``capture_end`` fail the same way here.
"""

from __future__ import annotations

import functools
import threading
import warnings
import weakref
from typing import Any

import torch

from seam.emulator import CaptureRecorder, EmulatedGraph, RecordedOp
from seam.fork_ledger import ForkLedger
from seam.torch_cuda import conditional, cuda_bindings, cuda_errors, gc_pace, generators, in_flight, routes
from seam.torch_cuda.kinds import REGISTRY
from seam.torch_cuda.allocator import DEFAULT_POOL
from seam.torch_cuda.pools import CountingOps, Pool, free_default_pool_held, free_graph_held
from seam.torch_cuda.runtime import DeviceRng, runtime
from seam.torch_cuda.streams import Stream

_MODES = ("global", "thread_local", "relaxed")


class _SeededOp(RecordedOp):
    """A recorded random operation: each replay draws at the replay's base offset of its generator's
    state plus the operation's own offset inside the graph (``DeviceRng``)."""

    state: DeviceRng
    at: int

    @classmethod
    def of(cls, op: RecordedOp, state: DeviceRng, at: int) -> "_SeededOp":
        seeded = cls(op.func, op.args, op.kwargs, op.outputs, op.mutating)
        seeded.state, seeded.at = state, at
        return seeded

    def run(self) -> None:
        with generators.replay_draw(self.state, self.at, self.kwargs):
            super().run()


#: CPU kernels whose results depend on autograd being on: ``mkldnn_rnn_layer`` (``nn.LSTM``) returns its
#: workspace only then, and its ``out=`` twin refuses the recorded workspace buffer without it. A GPU
#: replays the kernels the capture chose, so these replay with grad on when they were captured with it.
_GRAD_MODE_KERNELS = frozenset({torch.ops.aten.mkldnn_rnn_layer.default, torch.ops.aten.mkldnn_rnn_layer.out})


class _GradOnOp(RecordedOp):
    """A recorded ``_GRAD_MODE_KERNELS`` operation captured with grad on: replayed with grad on (the
    replay's inputs are aliases that require no grad, so autograd records nothing)."""

    def run(self) -> None:
        with torch.enable_grad():
            super().run()


class _CapturedOps(CountingOps):
    """A capture's recorded operations, each kept with what its replay needs of the capture's state."""

    def append(self, op: Any) -> None:
        if getattr(op, "func", None) in _GRAD_MODE_KERNELS and torch.is_grad_enabled():
            op = _GradOnOp(op.func, op.args, op.kwargs, op.outputs, op.mutating)
        super().append(op)


class _PooledKinds:
    """The registry a capture's recorder marks its new buffers through: each is served from the pool."""

    def __init__(self, capture: "OpenCapture") -> None:
        self._capture = capture

    def mark(self, tensor: torch.Tensor, kind: Any) -> None:
        c = self._capture
        if kind == "device" and c.born_kind == "pinned":
            kind = "pinned"  # a device-to-host copy into pinned memory (``to("cpu", non_blocking=True)``)
        if kind == "device":
            c.pool.place(tensor, c.recorder.keep_until_replay)
        REGISTRY.mark(tensor, kind)

    @staticmethod
    def kind_of(tensor: torch.Tensor) -> Any:
        return REGISTRY.kind_of(tensor)


class OpenCapture:
    """One capture between ``capture_begin`` and ``capture_end``."""

    def __init__(self, stream: Stream, mode: str, pool: Pool) -> None:
        # (No reference to its CUDAGraph: the recorder's callbacks make a cycle with this object, and a
        # graph the user deletes must die at once, as on a GPU.)
        self.stream = stream
        self.mode = mode
        self.thread = threading.get_ident()
        self.pool = pool
        #: The pool's handle: the allocator model serves this capture's blocks from it.
        self.pool_handle: tuple[int, int] = DEFAULT_POOL
        self.ledger = ForkLedger(origin=stream._id, versions={stream._id: 0}, seen={stream._id: {}})
        self.recorder = CaptureRecorder(_PooledKinds(self), self._recording_now, self._count_op)
        self.recorder.allow_scalar_mask_fill = True
        self.ops = _CapturedOps()
        self.recorder.graph.ops = self.ops
        #: The first refused call that invalidated this capture (CUDA then fails its end).
        self.reason: str | None = None
        #: What the operation being recorded makes: ``pinned`` for a copy into pinned host memory.
        self.born_kind = "device"
        #: Another thread tried to end it (global or thread_local mode): CUDA then refuses its own end.
        self.ended_elsewhere = False
        #: Per recorded random operation (by id): the generator state it draws from, and its offset
        #: inside the graph.
        self.draws: dict[int, tuple[DeviceRng, int]] = {}
        #: Its ``CUDAGraph``, weakly (``get_currently_capturing_graph``; a graph the user drops still dies at once).
        self.graph_ref: Any = lambda: None
        #: The conditional nodes' bodies being captured, innermost last (``conditional.py``).
        self.bodies: list[conditional.OpenBody] = []

    def _recording_now(self) -> bool:
        return self.ledger.captures(runtime().current_stream()._id)

    def _count_op(self) -> None:
        sid = runtime().current_stream()._id
        self.ledger.versions[sid] = self.ledger.versions.get(sid, 0) + 1

    def invalidate(self, reason: str) -> None:
        self.reason = self.reason or reason


def _pool_handle() -> tuple[int, int]:
    return (0, next(runtime().pool_ids))


def _pool(handle: tuple[int, int]) -> Pool:
    pools = runtime().pools
    if handle not in pools:
        pools[handle] = Pool()
    return pools[handle]


def graph_pool_handle() -> tuple[int, int]:
    """``torch.cuda.graph_pool_handle()``: a token that lets graphs share one memory pool."""
    return _pool_handle()


def is_current_stream_capturing() -> bool:
    rt = runtime()
    return rt.capture_of(rt.current_stream()._id) is not None


def _holders(state: DeviceRng) -> tuple[tuple[str, int, int], ...]:
    return (("rng-holder", id(state), 0), ("rng-holder", id(state), 1))


class CUDAGraph:
    """``torch.cuda.CUDAGraph`` on the emulated device."""

    def __new__(cls, keep_graph: bool = False) -> "CUDAGraph":
        self = object.__new__(cls)
        self._graph: EmulatedGraph | None = None
        self._capture: OpenCapture | None = None
        self._pool: tuple[int, int] | None = None
        #: The device it was made on: a graph of an earlier ``emulate_cuda()`` block (an earlier test)
        #: that the collector finalizes later touches no capture of this one.
        self._runtime = runtime()
        self.keep_graph = keep_graph
        #: Generator states registered with this graph (the default generator's joins at capture_begin),
        #: each with the whole graph's increment of its offset, known at capture_end.
        self._rng_states: list[list[Any]] = []
        #: Whether the captured graph has its executable (CUDA's ``has_graph_exec_``).
        self._instantiated = False
        #: Its pool was begun in the allocator model (released at reset or when the graph dies).
        self._pool_begun = False
        #: Generator states this graph is registered with, holding their seed and offset holders (``_hold``).
        self._holding: list[Any] = []
        return self

    def __init__(self, keep_graph: bool = False) -> None:
        pass

    def capture_begin(self, pool: Any = None, capture_error_mode: str = "global", **kwargs: Any) -> None:
        rt = runtime()
        in_flight.settle(rt)  # what replays in flight hold is theirs until they ran: not the capture's to take
        if self._graph is not None or self._capture is not None:
            raise cuda_errors.torch_error(cuda_errors.ALREADY_CAPTURED, "capture_begin on a graph that holds a capture")
        if capture_error_mode not in _MODES:
            raise RuntimeError(f"Unknown capture error mode. Expected `global`, `thread_local`, or `relaxed`, "
                               f"got {capture_error_mode}")
        stream = rt.current_stream()
        # torch 2.11's order: the default generator is registered (refused on a capturing stream) and every
        # registered state's prologue runs BEFORE the default stream or a pool recorded to is refused, so those two
        # refusals leave the generator capturing (H100, session 24: test_a_refused_capture_begin_leaves_the_...)
        if rt.capture_of(stream._id) is not None:
            raise cuda_errors.torch_error(cuda_errors.during_capture("Cannot register the state"),
                                          "capture_begin on a stream that is capturing")
        self._register(rt.rng)
        for state, _ in self._rng_states:
            state.capture_prologue()
        if stream.cuda_stream == 0:
            raise cuda_errors.torch_error(cuda_errors.DEFAULT_STREAM_CAPTURE, "capture_begin on the default stream")
        # no pool given: a new one at each begin, as torch's ``capture_begin`` takes ``graph_pool_handle(false)``
        wanted = tuple(pool) if pool is not None else (next(rt.graph_pool_ids), 0)
        routes.take_pool(rt, wanted, "capture_begin")  # its entry goes in below, once the capture is made
        self._pool = wanted
        capture = OpenCapture(stream, capture_error_mode, _pool(self._pool))
        capture.pool_handle = self._pool
        capture.graph_ref = weakref.ref(self)
        allocator = rt.allocator
        allocator.before_read["graphs"] = functools.partial(free_graph_held, rt)
        allocator.before_read[allocator.FIGURES_ONLY] = functools.partial(free_default_pool_held, rt)
        rt.routes.append(routes.Route(self._pool, capture=capture))  # the capture's streams' blocks: to its pool
        self._pool_begun = True
        self._capture = capture
        rt.captures.append(capture)
        gc_pace.capture_opened(len(rt.captures))

    def _release_memory(self) -> None:
        """The graph's memory goes back: its generator states' holders freed when no other graph holds them, its
        pool freeable once no graph uses it."""
        if self._runtime is runtime():
            for state in getattr(self, "_holding", ()):
                state.graphs -= 1
                if state.graphs == 0:
                    for holder in _holders(state):
                        self._runtime.allocator.note_free(holder)
            if getattr(self, "_pool_begun", False):
                self._runtime.allocator.release_pool(self._pool)
        self._holding = []
        self._pool_begun = False

    @staticmethod
    def get_currently_capturing_graph() -> "CUDAGraph":
        """The graph whose capture the current stream is part of (``conditional.py``)."""
        return conditional.currently_capturing_graph()

    def begin_capture_to_if_node(self, scalar_cuda_pred_tensor: torch.Tensor) -> None:
        """An IF node: what is captured until ``end_capture_to_conditional_node`` runs at a replay only when
        ``scalar_cuda_pred_tensor`` is true then (``conditional.py``)."""
        conditional.begin_if(self._capture, self._graph is not None and self._instantiated,
                             scalar_cuda_pred_tensor)

    def end_capture_to_conditional_node(self) -> None:
        conditional.end_conditional(self._capture)

    def register_generator_state(self, generator: Any) -> None:
        """``CUDAGraph.register_generator_state``: replays of this graph draw from ``generator``'s state
        anew, as they do from the default generator's (which is registered at ``capture_begin``)."""
        if is_current_stream_capturing():
            raise cuda_errors.torch_error(cuda_errors.during_capture("Cannot register the state"),
                                          "register_generator_state on a stream that is capturing")
        found = generators.emulated(generator)
        if found is None:
            raise RuntimeError("Expected a CUDA Generator")
        self._register(found._state)

    def _register(self, state: DeviceRng) -> None:
        if all(kept is not state for kept, _ in self._rng_states):
            self._rng_states.append([state, 0])
        self._hold(state)

    def _hold(self, state: DeviceRng) -> None:
        """CUDA's ``register_graph``: a generator state's seed and offset holders (two 8-byte device blocks, on the
        current stream, in the default pool) are made when the first graph registers with it and freed when the
        last one is reset or dies: one pair a STATE, however many graphs (H200, torch 2.11, device probe of
        session 14; ``a_capture_allocates_into_the_graphs_private_pool``)."""
        if any(held is state for held in self._holding):
            return
        self._holding.append(state)
        state.graphs += 1
        if state.graphs == 1:
            rt = runtime()
            for holder in _holders(state):
                rt.allocator.note_allocation(holder, 8, rt.current_stream().cuda_stream, DEFAULT_POOL, None)

    def capture_end(self) -> None:
        rt = runtime()
        capture = self._capture
        if capture is None:
            raise cuda_errors.cuda_error(cuda_errors.PRESENT_STATE, "capture_end without a capture_begin")
        if rt.current_stream()._id != capture.stream._id:
            raise cuda_errors.torch_error(cuda_errors.SAME_STREAM, "capture_end on another stream than its begin")
        if capture.ended_elsewhere:
            self._close(capture)
            raise cuda_errors.cuda_error(cuda_errors.PRESENT_STATE, "another thread tried to end this capture")
        if capture.thread != threading.get_ident() and capture.mode != "relaxed":
            capture.ended_elsewhere = True
            raise cuda_errors.cuda_error(cuda_errors.OTHER_THREAD_END, "capture_end from another thread")
        others = [c for c in rt.refusing_captures() if c is not capture]
        if others and capture.mode != "relaxed":
            # H200: with two captures open, the end of one is refused and the other ends invalidated (the end
            # instantiates the graph, a call the other capture's mode refuses: a global one's from any thread, a
            # thread_local one's from its own; another thread's thread_local capture leaves this end alone).
            self._close(capture)
            for other in others:
                other.invalidate("the refused end of another capture")
            raise cuda_errors.cuda_error(cuda_errors.NOT_PERMITTED, "capture_end while another capture is open")
        unjoined = capture.ledger.unjoined()
        graph = self._close(capture, accepted=capture.reason is None and not unjoined)
        if capture.reason is not None:
            raise cuda_errors.cuda_error(cuda_errors.INVALIDATED, f"the capture was invalidated by {capture.reason}")
        if unjoined:
            # CUDA's words alone: libraries match them (docs/subjects.md), so no reason of ours is added.
            raise cuda_errors.cuda_error_exactly(cuda_errors.UNJOINED, "cudaErrorStreamCaptureUnjoined")
        for entry in self._rng_states:
            entry[1] = entry[0].capture_epilogue()
        if not graph.ops:
            warnings.warn(cuda_errors.EMPTY_GRAPH, UserWarning, stacklevel=2)
        capture.pool.graph_refs[id(self)] = capture.ops.refs
        draws = capture.draws
        graph.ops = [_SeededOp.of(op, *draws[id(op)]) if id(op) in draws else op for op in graph.ops]
        # The ended capture lingers in a reference cycle until the collector runs: its list lets go of the recorded
        # operations now (the graph holds them), so a graph dropped later frees their tensors at once (``_drop_graph``).
        list.clear(capture.ops)
        self._graph = graph
        self._instantiated = not self.keep_graph  # CUDA instantiates at the end unless the graph is kept

    def _close(self, capture: OpenCapture, *, accepted: bool = False) -> EmulatedGraph:
        """The capture is over, ended (``accepted``) or refused. torch's ``capture_end`` checks
        ``cudaStreamEndCapture``'s answer BEFORE anything else, so only an accepted end ends the allocator's
        routing (the first entry of the pool, whoever began it: the capture's own, or one begun again after the
        capture's was ended, ``routes.py``; none left, none) and later lets the graph's reset give its use of the
        pool back. After a refused end the entries stay for the rest of the process (the capture's own takes no
        stream any more): the pool is refused to any later capture or ``use_mem_pool``, and the default pools'
        cached segments are never released (H200, session 15), until ``torch._C._cuda_endAllocateToPool`` ends it.
        Its generator states stay capturing too: only an accepted end runs their epilogue, so an eager draw on the
        device raises "Offset increment outside graph capture encountered unexpectedly." until a capture ends
        cleanly (H100, session 23)."""
        self._capture = None
        rt = runtime()
        if capture in rt.captures:
            rt.captures.remove(capture)
            gc_pace.capture_closed(len(rt.captures))
            if accepted:
                routes.end(rt, capture.pool_handle, missing_ok=True)
            else:
                routes.left_by_a_refused_end(rt, capture)
                self._pool_begun = False  # torch's reset releases the pool only after an accepted end
        return capture.recorder.finish()

    def instantiate(self) -> None:
        if self._graph is None:
            raise RuntimeError("capture_end() must have been called before calling instantiate")
        if self._instantiated and not self.keep_graph:
            raise RuntimeError("instantiate() is intended to be called by the user only when keep_graph=true")
        self._instantiated = True

    def raw_cuda_graph(self) -> int:
        """A handle standing for the captured ``cudaGraph_t`` (kept graphs only, as in torch)."""
        if not self.keep_graph:
            raise RuntimeError("You cannot access the raw cudaGraph_t instance unless CUDAGraph was initialized "
                               "with keep_graph=true")
        if self._graph is None:
            raise RuntimeError("You cannot access the raw cudaGraph_t instance until capture_end() has been called")
        cuda_bindings.register_graph(id(self._graph), self._graph)  # what ``cudaGraph_t(init_value=...)`` names
        return id(self._graph)

    def raw_cuda_graph_exec(self) -> int:
        """A handle standing for the graph's ``cudaGraphExec_t``, once instantiated."""
        if self._graph is None or not self._instantiated:
            raise RuntimeError("You cannot access the raw cudaGraphExec_t instance until instantiate() has been called")
        cuda_bindings.register_exec(id(self._graph.ops), self._graph)
        return id(self._graph.ops)

    def replay(self) -> None:
        if self._graph is None:
            raise cuda_errors.torch_error(cuda_errors.REPLAY_WITHOUT_CAPTURE, "replay of a graph with no capture")
        if is_current_stream_capturing():
            raise cuda_errors.torch_error(cuda_errors.during_capture("Cannot prepare for replay"),
                                          "replay on a stream that is capturing")
        for state, increment in self._rng_states:
            state.replay_prologue(increment)
        self._instantiated = True  # a kept graph's first replay instantiates it
        # On a GPU a replay launches the graph and returns; it dispatches no tensor operation: no mode (the
        # emulator's or a user's) sees the re-issued work, which runs when the device next acts (``in_flight``).
        rt = runtime()
        in_flight.issue(rt, rt.current_stream()._id, self._graph, any(n for _, n in self._rng_states))

    def reset(self) -> None:
        if self._graph is not None and runtime().refusing_captures():
            for capture in runtime().refusing_captures():
                capture.invalidate("the reset of another graph")
            warnings.warn("CUDA warning: operation not permitted when stream is capturing", UserWarning, stacklevel=2)
        self._drop_graph()
        self._rng_states = []
        self._instantiated = False
        self._forget_pool_refs()
        self._release_memory()

    def _forget_pool_refs(self) -> None:
        if self._pool is not None and self._runtime is runtime() and self._pool in runtime().pools:
            runtime().pools[self._pool].forget(id(self))

    def pool(self) -> tuple[int, int]:
        if self._pool is None:
            raise cuda_errors.torch_error(cuda_errors.POOL_WITHOUT_CAPTURE, "pool() of a graph never captured")
        return self._pool

    def enable_debug_mode(self) -> None:
        """CUDA's graphs debug mode: one flag of the device (torch's ``_cuda_graphs_debug`` is a static of
        CUDAGraph.cpp), so it holds for every graph of the process from then on, not this one alone."""
        runtime().graphs_debug = True

    def debug_dump(self, debug_path: str) -> None:
        """The captured graph as DOT (one node per recorded operation, in issue order), as torch's C++ does it:
        in debug mode or for a kept graph it warns that it is called, and writes only while the graph holds its
        ``cudaGraph_t``, which a graph not kept gave up when capture_end instantiated it (H200, torch 2.11: a
        graph not kept is never written, debug mode or not); torch's warning otherwise."""
        if not (runtime().graphs_debug or self.keep_graph):
            warnings.warn("CUDA Graphs debug not enabled, set with [graph].enable_debug_mode()", UserWarning,
                          stacklevel=2)
            return
        warnings.warn("DEBUG: calling debug_dump()", UserWarning, stacklevel=2)
        if self._graph is None or not self.keep_graph:
            return
        warnings.warn(f"DEBUG: calling cudaGraphDebugDotPrint() with {debug_path}", UserWarning, stacklevel=2)
        nodes = [f'  n{i} [label="{getattr(op.func, "__name__", str(op.func))}"];' for i, op in enumerate(self._graph.ops)]
        edges = [f"  n{i} -> n{i + 1};" for i in range(len(self._graph.ops) - 1)]
        with open(debug_path, "w") as f:
            f.write("digraph dot {\n" + "\n".join(nodes + edges) + "\n}\n")

    def __del__(self) -> None:
        # CUDA destroys the graph's executable with the object: refused (and the open capture
        # invalidated) while a capture that forbids it is open (H200: del_other_graph).
        try:
            if getattr(self, "_graph", None) is not None and self._runtime is runtime():
                for capture in runtime().refusing_captures():
                    capture.invalidate("the release of another graph")
                self._forget_pool_refs()
            self._drop_graph()
            self._release_memory()
        except Exception:
            pass

    def _drop_graph(self) -> None:
        """The captured graph goes at once, as CUDA destroys it: its recorded operations let go of the tensors they
        hold now, not when the collector next breaks the graph's reference cycle (until then the memory figures
        counted a dead graph's inputs as in use; H200, session 14: ``two_successive``)."""
        graph = getattr(self, "_graph", None)
        if graph is not None:
            if getattr(self, "_runtime", None) is runtime():
                in_flight.settle_before_drop(runtime(), graph)
            graph.ops.clear()
        self._graph = None


class graph(torch.cuda.graphs.graph):  # type: ignore[misc,name-defined]
    """``torch.cuda.graph``: torch's own context manager, with a default capture stream of its own."""

    default_capture_stream = None


if not conditional.TORCH_HAS_THEM:  # the emulator follows the torch it runs on (``conditional.py``)
    del CUDAGraph.get_currently_capturing_graph, CUDAGraph.begin_capture_to_if_node
    del CUDAGraph.end_capture_to_conditional_node
