"""The CPU graph emulator: record the tensor operations of a capture, replay them for real.

A CPU "replay" that recomputes nothing proves nothing. This one records every tensor operation
issued on a capturing queue (a ``TorchDispatchMode``) and, at replay, re-issues them against the
SAME tensors, so a replay recomputes from whatever the captured buffers hold NOW, and Python/host
code in the captured body is not re-run. It follows real CUDA where CUDA is strict:

* inside capture nothing really runs: every buffer that existed before the capture and was written
  in it is RESTORED when the segment closes, and every buffer born inside the capture is POISONED
  (NaN / a sentinel), so code that reads a captured output without a replay reads garbage, as it
  would on a GPU;
* operations issued on a queue that is not part of the capture run eagerly and are not recorded;
* a side queue forked into the capture must be joined before the close (``UnjoinedForkError``).

Worked example: ``y = x @ w`` captured, then ``x.copy_(new)`` and ``replay`` -> the recorded
``mm`` runs again on ``x``'s new contents and the result is copied into the recorded ``y``.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch
from torch.utils._python_dispatch import _disable_current_modes

from seam.backend import RawGraph
from seam.capture_guard import CaptureGuard, MemoryKind
from seam.op_args import leaves, map_leaves, tensors

# torch's helper imports modules at its first call (torch 2.13: ``torch._subclasses.schema_check_mode``, about 1 ms): made
# here, not at the first capture's end, which another thread's synchronize would meet open that much longer.
with _disable_current_modes():
    pass
# So does torch's first storage copy (about 0.5 ms here, session 40) and its first ``set_``: a capture's first
# recorded write saves the storage it writes, and every recorded tensor is re-pointed at its memory (``storage_alias``).
torch.empty(0).set_(torch.UntypedStorage(4).copy_(torch.UntypedStorage(4)), 0, (1,), (1,))

_INT_POISON = -0x5EA5
#: The sentinel's low byte: a one-byte integer cannot hold the sentinel (``fill_`` refuses it).
_BYTE_POISON = 0x5B

#: Ops that write arguments their schema does not mark as written, by position: a training
#: ``native_batch_norm`` (what ``F.batch_norm`` runs on the CPU) updates its running mean and variance
#: (the schema's omission that ``_native_batch_norm_legit`` was added to mend).
_UNMARKED_WRITES: dict[Any, tuple[int, ...]] = {torch.ops.aten.native_batch_norm.default: (3, 4)}


class DeviceRegistry:
    """Which CPU storages count as device or pinned memory; anything else is pageable host."""

    def __init__(self) -> None:
        self._kinds: dict[int, MemoryKind] = {}

    def mark(self, tensor: torch.Tensor, kind: MemoryKind) -> None:
        storage = tensor.untyped_storage()
        key = id(storage)
        if key not in self._kinds:
            # Forget the entry when the storage dies, so a recycled id is never misread.
            weakref.finalize(storage, self._kinds.pop, key, None)
        self._kinds[key] = kind

    def kind_of(self, tensor: torch.Tensor) -> MemoryKind:
        return self._kinds.get(id(tensor.untyped_storage()), "pageable")


@dataclass
class RecordedOp:
    """One operation of a captured segment."""

    #: The aten overload that ran.
    func: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    #: The tensors it returned at capture (replay writes the recomputed values into these).
    outputs: list[torch.Tensor]
    #: True when replay re-issues ``func`` as is: it writes its arguments in place (``add_``,
    #: ``copy_``, ``out=``), or it was rewritten to its ``out=`` overload writing into ``outputs``.
    mutating: bool

    def run(self) -> None:
        """Issue the operation again, leaving its results in the captured output buffers."""
        # ``_op`` is the C++ callable behind the OpOverload: one Python frame less per op.
        result = self.func._op(*self.args, **self.kwargs)
        if self.mutating:
            return
        # ``outputs`` holds the TENSOR leaves of the captured result: a ``None`` leaf (a gradient
        # ``convolution_backward`` was told not to compute) holds no buffer, and is skipped here too.
        fresh_tensors = tensors(result)
        for fresh, kept in zip(fresh_tensors, self.outputs):
            if fresh is not kept:
                kept.copy_(fresh)

    @classmethod
    def functional(cls, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], outputs: list[torch.Tensor], *,
                   timed: bool = True) -> "RecordedOp":
        """Replay through the ``out=`` overload when one exists AND is faster here.

        An ``out=`` call saves the allocation and the copy back, but some CPU ``out`` kernels are
        slower than their functional twin (``gelu.out``, ``native_layer_norm.out``), so both are
        timed once, at capture, and the faster becomes the replay plan. Either writes the same
        values into the same buffers. With ``timed`` False (what the memory holds at capture is refused by
        the kernel: ``_run_at_capture``) nothing is run now, and the replay plan is the functional form.
        """
        plain = cls(func, args, kwargs, outputs, False)
        out = out_variant(func)
        if not timed or out is None or len(out[1]) != len(outputs):
            return plain
        overload, names = out
        rewritten = cls(overload, args, {**kwargs, **dict(zip(names, outputs))}, outputs, True)
        key = _signature(func, args, kwargs)
        faster = _FASTER.get(key) if key is not None else None
        if faster is None:
            faster = "out" if _cost(rewritten) <= _cost(plain) else "functional"
            if key is not None:
                if len(_FASTER) >= _FASTER_MOST:
                    _FASTER.clear()
                _FASTER[key] = faster
        return rewritten if faster == "out" else plain


class GraphNode:
    """A node of a captured graph that is no aten operation (an event's record, a conditional node). It stands for
    its own ``func`` (the capture reads ``op.func.tags``; a dump reads its ``__name__``, CUDA's name for the node);
    a subclass names itself and says what ``run`` does at each replay."""

    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = {}
    outputs: list[torch.Tensor] = []
    tags: tuple[Any, ...] = ()
    __name__ = "cudaGraphNode"

    def __init__(self) -> None:
        self.func = self

    def run(self) -> None:
        raise NotImplementedError(f"{type(self).__name__}.run")


#: Which form replays faster ("out" or "functional"), by the operation and what it was called with
#: (``_signature``): timed once, at the first capture of such a call; a model's layers repeat their calls.
_FASTER: dict[tuple[Any, ...], str] = {}
#: Past this many signatures the table starts again (a bound on memory; a decision is only a speed).
_FASTER_MOST = 4096
#: A call that takes this long (ns) is timed once after its warm-up: noise is small beside it, and the
#: samples of a large matmul (seconds each in half precision on a CPU) made a capture cost 16 of them.
_LONG_NS = 1_000_000


def _signature(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    """What decides which form of ``func`` is faster: its tensors' shapes, strides and dtypes, and its other
    arguments' values. ``None`` where an argument cannot be a key (the call is then timed each time)."""
    parts: list[Any] = [func, tuple(kwargs)]
    for leaf in leaves((args, kwargs)):
        if isinstance(leaf, torch.Tensor):
            if leaf.layout != torch.strided:
                return None
            parts.append((tuple(leaf.shape), leaf.stride(), leaf.dtype))
        else:
            try:
                hash(leaf)
            except TypeError:
                return None
            parts.append((type(leaf), leaf))
    return tuple(parts)


def _cost(op: RecordedOp, samples: int = 7) -> int:
    """The fastest of a few single calls: the minimum is what noise from other processes spares. A long call
    (``_LONG_NS`` or more at its warm-up) is timed once."""
    start = time.perf_counter_ns()
    op.run()  # warm
    if time.perf_counter_ns() - start >= _LONG_NS:
        samples = 1
    best = None
    for _ in range(samples):
        start = time.perf_counter_ns()
        op.run()
        took = time.perf_counter_ns() - start
        best = took if best is None else min(best, took)
    return best or 0


@functools.cache
def out_variant(func: Any) -> tuple[Any, tuple[str, ...]] | None:
    """The ``out=`` overload of a functional aten op with the same inputs, and its out-argument names."""
    wanted = [(a.name, str(a.type)) for a in func._schema.arguments]
    packet = func.overloadpacket
    for name in packet.overloads():
        candidate = getattr(packet, name)
        args = candidate._schema.arguments
        writes = tuple(a.name for a in args if a.alias_info is not None and a.alias_info.is_write)
        inputs = [(a.name, str(a.type)) for a in args if a.alias_info is None or not a.alias_info.is_write]
        # Each out argument takes ONE kept tensor: a list-typed one (``_foreach_*.out``) is not used.
        singles = all(str(a.type) == "Tensor" for a in args if a.name in writes)
        if writes and singles and inputs == wanted and len(writes) == len(func._schema.returns):
            return candidate, writes
    return None


#: Every autocast dispatch key (CPU autocast is the emulated device's: ``seam.torch_cuda.autocast``).
_AUTOCAST_KEYS = functools.reduce(operator.or_, (torch._C.DispatchKeySet(getattr(torch._C.DispatchKey, name))
                                                 for name in dir(torch._C.DispatchKey) if name.startswith("Autocast")))


@contextlib.contextmanager
def as_launched() -> Iterator[None]:
    """What a replay's operations run under: a GPU's replay launches the captured kernels, which no mode of the
    launching thread sees. In inference mode (neither autograd nor inference mode sees a kernel: buffers made in
    a capture under ``torch.inference_mode()`` are written by a replay issued or settled outside it), with no
    autocast key (the operations were cast as they were captured: a float32 ``addmm`` recorded outside autocast
    and replayed as is inside an autocast region ran in float16). The exclusion undoes only what it added, so
    nested or interleaved replays leave the caller's state as it was."""
    with torch.inference_mode(), torch._C._ExcludeDispatchKeyGuard(_AUTOCAST_KEYS):
        yield


@dataclass
class EmulatedGraph(RawGraph):
    """A captured segment: its operations, and the buffers it owns (its memory pool)."""

    ops: list[RecordedOp] = field(default_factory=list)

    def __post_init__(self) -> None:
        RawGraph.__init__(self)

    def replay(self) -> None:
        for _ in self.steps():
            pass

    def steps(self) -> Iterator[None]:
        """The replay, one recorded operation a step (``seam.torch_cuda.in_flight`` runs two graphs' steps in
        turn, as a GPU runs two replays that nothing orders at once), ``as_launched``."""
        with as_launched():
            for op in self.ops:
                op.run()
                yield

    def native_release(self) -> Callable[[], None]:
        ops = self.ops  # not ``self``: a deferred release must not keep the whole segment alive
        return ops.clear


def _mutated_args(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[torch.Tensor]:
    out = [args[i] for i in _UNMARKED_WRITES.get(func, ()) if isinstance(args[i], torch.Tensor)]
    for i, name in _written(func):
        out.extend(tensors(args[i] if i < len(args) else kwargs.get(name)))
    return out


@functools.cache
def _written(func: Any) -> tuple[tuple[int, str], ...]:
    """The position and name of each argument ``func``'s schema says it writes (read once per operation)."""
    return tuple((i, arg.name) for i, arg in enumerate(func._schema.arguments)
                 if arg.alias_info is not None and arg.alias_info.is_write)


def _new_memory(outputs: list[torch.Tensor], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[torch.Tensor]:
    """The outputs that share memory with no argument: the tensors the op allocated (storages are
    compared: some aliasing ops, ``_unsafe_view``, carry no alias annotation)."""
    inputs = {id(t.untyped_storage()) for t in tensors((args, kwargs))}
    return [t for t in outputs if id(t.untyped_storage()) not in inputs]


def storage_alias(t: torch.Tensor) -> torch.Tensor:
    """The same memory as ``t`` under a tensor of its own: its own version counter, so what the
    emulator writes there (a replay, a poison) bumps no version autograd saved, as a GPU's replay
    bumps none (``make_graphed_callables`` captures a backward over the forward's saved outputs)."""
    return torch.empty(0, dtype=t.dtype).set_(t.untyped_storage(), t.storage_offset(), t.size(), t.stride())


def _aliases(outputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Storage aliases of the captured outputs: replay writes the captured ADDRESS, whatever the
    Python tensor object was re-pointed to since."""
    return [storage_alias(t) for t in outputs]


#: Refusals that are the emulated CUDA's own (raised by its checks, never by a CPU kernel's view of values).
_DEVICE_ERRORS = tuple(t for t in (getattr(torch, "AcceleratorError", None), torch.OutOfMemoryError) if t is not None)


def _run_at_capture(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, bool]:
    """``func`` run now, for its results: on what the memory holds at capture time (and whether it ran).

    On a GPU a capture runs no kernel, so nothing reads the VALUES an operation is given until a replay; here each
    operation runs to have its results, and memory that only a replay computes (an earlier graph's output, never
    replayed) holds garbage, which a CPU kernel's own checks may refuse (an index out of bounds: PyTorch's
    ``test_graph_make_graphed_callables``, whose backward's ``gather`` reads the index its forward's capture made).
    When the same operation on tensors of the same shapes but no values (``meta``) is accepted, the refusal was the
    values', which a GPU never looked at: the results are fresh memory of those shapes (as unwritten as a capture
    leaves a GPU's), a written argument is left as it was, and the replay runs the operation on what is there then.
    A refusal the shapes alone bring (a size mismatch) is raised as it was."""
    try:
        return func(*args, **kwargs), True
    except (RuntimeError, IndexError) as refused:
        if isinstance(refused, _DEVICE_ERRORS):  # what the emulated device itself refused: CUDA's words
            raise
        real: dict[int, torch.Tensor] = {}

        def shaped(value: Any) -> Any:
            if not isinstance(value, torch.Tensor):
                return value
            meta = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device="meta")
            real[id(meta)] = value
            return meta

        try:
            meta_result = func(*map_leaves(shaped, args), **map_leaves(shaped, kwargs))
        except Exception:
            raise refused from None

        def fresh(value: Any) -> Any:
            if not isinstance(value, torch.Tensor):
                return value
            if id(value) in real:  # a written argument (in place, ``out=``): as it was
                return real[id(value)]
            return torch.empty_strided(value.shape, value.stride(), dtype=value.dtype)

        return map_leaves(fresh, meta_result), False


@functools.cache
def _is_view(func: Any) -> bool:
    returns = func._schema.returns
    return bool(returns) and all(r.alias_info is not None and not r.alias_info.is_write for r in returns)


class CaptureRecorder(CaptureGuard):
    """Guards like CUDA, and records the operations issued on the capturing queues."""

    def __init__(self, registry: DeviceRegistry, recording: Callable[[], bool], on_op: Callable[[], None]) -> None:
        super().__init__(registry.kind_of, recording)
        self._registry = registry
        self._recording = recording
        self._on_op = on_op
        self.graph = EmulatedGraph()
        self._born: dict[int, torch.Tensor] = {}
        self._saved: dict[int, tuple[torch.UntypedStorage, torch.UntypedStorage]] = {}
        #: Storages made before the capture that serve its new results (``keep_until_replay``): not poisoned.
        self._kept: set[int] = set()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if not self._recording():
            # CUDA's global capture mode: other queues too. What it lets through runs now, and never
            # yields fresh memory from device memory (that is refused), so no result changes kind.
            self.check_outside(func, args, kwargs)
            return func(*args, **kwargs)
        self.check(func, args, kwargs)
        if self._host_only(args, kwargs):
            # Host memory is not captured: on CUDA a host op in the body runs ONCE, now, and never
            # at replay (H200: ``host_op_in_body``). So it is neither recorded nor rolled back.
            return func(*args, **kwargs)
        mutated = _mutated_args(func, args, kwargs)
        for t in mutated:
            self._save(t.untyped_storage())
        result, ran = _run_at_capture(func, args, kwargs)
        self._on_op()
        outputs = tensors(result)
        born = _new_memory(outputs, args, kwargs) if outputs and not _is_view(func) else []
        if born:
            # A functional op's results, or the NEW results of an op that also writes an argument (a
            # training batch norm's batch mean): graph memory, garbage until a replay re-issues the op
            # (writing its arguments again, as CUDA's does) and refreshes them.
            for t in born:
                self._registry.mark(t, "device")
                if id(t.untyped_storage()) not in self._kept:
                    self._born.setdefault(id(t.untyped_storage()), storage_alias(t))
            self.graph.ops.append(RecordedOp.functional(func, *self._bake(args, kwargs), _aliases(outputs), timed=ran))
        elif mutated:  # in place or ``out=``: every result is a written argument, rewritten by re-issuing
            self.graph.ops.append(RecordedOp(func, *self._bake(args, kwargs), _aliases(outputs), True))
        return result

    def _host_only(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """An op whose tensors are all host memory (a factory with no tensor argument is not)."""
        found = tensors((args, kwargs))
        return bool(found) and all(self._registry.kind_of(t) != "device" for t in found)

    def _bake(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """What the graph reads at replay: device ADDRESSES (storage aliases, not the Python tensor
        objects, so ``x.data = other`` after capture is not followed: H200 ``data_swap_after_capture``)
        and host scalars BAKED at their capture-time value (H200 ``host_scalar_baked``)."""
        def one(value: Any) -> Any:
            if not isinstance(value, torch.Tensor):
                return value
            if value.dim() == 0 and self._registry.kind_of(value) == "pageable":
                return value.detach().clone()
            return storage_alias(value)
        return map_leaves(one, args), map_leaves(one, kwargs)

    def _save(self, storage: torch.UntypedStorage) -> None:
        key = id(storage)
        if key in self._born or key in self._saved:
            return
        self._saved[key] = (storage, storage.clone())

    def keep_until_replay(self, storage: torch.UntypedStorage) -> None:
        """``storage``, memory made before the capture and free in it, serves a new result of the capture (the
        torch.cuda emulation places results where a GPU's allocator does): a GPU runs no kernel while capturing,
        so that memory keeps what it held until a replay writes it, and the graph may read it first (a backward
        graph reusing a saved activation's block for its gradient: read at replay, then written). So its contents
        are given back at the end, as any memory the capture wrote, and it is not poisoned."""
        self._save(storage)
        if id(storage) not in self._born:
            self._kept.add(id(storage))

    def finish(self) -> EmulatedGraph:
        """Undo capture-time effects the way real CUDA never had them; return the graph. The writes are the
        emulator's own, under no mode: no dispatch mode may see them (a CUDA graph tree's mark on an output whose
        memory the capture reused refuses every read and write of it, and a capture's end touches no memory)."""
        with torch.no_grad(), _disable_current_modes():
            for storage, saved in self._saved.values():
                storage.copy_(saved)
            for t in self._born.values():
                _poison(t)
        self._saved.clear()
        self._born.clear()
        self._kept.clear()
        return self.graph


def _poison(t: torch.Tensor) -> None:
    t = storage_alias(t)
    if t.dtype.is_floating_point or t.dtype.is_complex:
        t.fill_(float("nan"))
    elif t.dtype != torch.bool:
        t.fill_(_INT_POISON if t.element_size() > 1 else _BYTE_POISON)

