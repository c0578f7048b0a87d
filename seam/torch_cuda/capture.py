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

import threading
import warnings
from typing import Any

import torch
from torch.utils._python_dispatch import _disable_current_modes

from seam.emulator import CaptureRecorder, EmulatedGraph
from seam.fork_ledger import ForkLedger
from seam.torch_cuda import cuda_errors
from seam.torch_cuda.kinds import REGISTRY
from seam.torch_cuda.runtime import runtime
from seam.torch_cuda.streams import Stream

_MODES = ("global", "thread_local", "relaxed")


class OpenCapture:
    """One capture between ``capture_begin`` and ``capture_end``."""

    def __init__(self, stream: Stream, mode: str) -> None:
        # (No reference to its CUDAGraph: the recorder's callbacks make a cycle with this object, and a
        # graph the user deletes must die at once, as on a GPU.)
        self.stream = stream
        self.mode = mode
        self.thread = threading.get_ident()
        self.ledger = ForkLedger(origin=stream.id, versions={stream.id: 0}, seen={stream.id: {}})
        self.recorder = CaptureRecorder(REGISTRY, self._recording_now, self._count_op)
        #: The first refused call that invalidated this capture (CUDA then fails its end).
        self.reason: str | None = None

    def _recording_now(self) -> bool:
        return self.ledger.captures(runtime().current_stream().id)

    def _count_op(self) -> None:
        sid = runtime().current_stream().id
        self.ledger.versions[sid] = self.ledger.versions.get(sid, 0) + 1

    def invalidate(self, reason: str) -> None:
        self.reason = self.reason or reason


def _pool_handle() -> tuple[int, int]:
    return (0, next(runtime().pool_ids))


def graph_pool_handle() -> tuple[int, int]:
    """``torch.cuda.graph_pool_handle()``: a token that lets graphs share one memory pool."""
    return _pool_handle()


def is_current_stream_capturing() -> bool:
    rt = runtime()
    return rt.capture_of(rt.current_stream().id) is not None


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
        return self

    def __init__(self, keep_graph: bool = False) -> None:
        pass

    def capture_begin(self, pool: Any = None, capture_error_mode: str = "global", **kwargs: Any) -> None:
        rt = runtime()
        if self._graph is not None or self._capture is not None:
            raise cuda_errors.torch_error(cuda_errors.ALREADY_CAPTURED, "capture_begin on a graph that holds a capture")
        if capture_error_mode not in _MODES:
            raise RuntimeError(f"Unknown capture error mode. Expected `global`, `thread_local`, or `relaxed`, "
                               f"got `{capture_error_mode}`")
        stream = rt.current_stream()
        if stream.cuda_stream == 0:
            raise cuda_errors.torch_error(cuda_errors.DEFAULT_STREAM_CAPTURE, "capture_begin on the default stream")
        if rt.capture_of(stream.id) is not None:
            raise cuda_errors.cuda_error(cuda_errors.NOT_PERMITTED, "capture_begin on a stream that is capturing")
        for other in rt.captures:
            if other.mode != "relaxed":  # H200: after a second begin, neither capture can end cleanly
                other.invalidate("a second capture began while this one was open")
        self._pool = tuple(pool) if pool is not None else self._pool or _pool_handle()
        capture = OpenCapture(stream, capture_error_mode)
        if any(c.mode != "relaxed" for c in rt.captures):
            capture.invalidate("it began while another capture was open")
        self._capture = capture
        rt.captures.append(capture)

    def capture_end(self) -> None:
        rt = runtime()
        capture = self._capture
        if capture is None:
            raise RuntimeError("Called CUDAGraph::capture_end without a preceding capture_begin")
        self._capture = None
        if capture in rt.captures:
            rt.captures.remove(capture)
        graph = capture.recorder.finish()
        unjoined = capture.ledger.unjoined()
        if capture.reason is not None:
            raise cuda_errors.cuda_error(cuda_errors.INVALIDATED, f"the capture was invalidated by {capture.reason}")
        if unjoined:
            raise cuda_errors.cuda_error(cuda_errors.UNJOINED,
                                         f"stream(s) {[hex(s) for s in unjoined]} forked into the capture were not "
                                         "joined back to the capturing stream before capture_end")
        if not graph.ops:
            warnings.warn(cuda_errors.EMPTY_GRAPH, UserWarning, stacklevel=2)
        self._graph = graph

    def instantiate(self) -> None:
        if self._graph is None:
            raise RuntimeError("instantiate() requires a successful capture")

    def replay(self) -> None:
        if self._graph is None:
            raise cuda_errors.torch_error(cuda_errors.REPLAY_WITHOUT_CAPTURE, "replay of a graph with no capture")
        # On a GPU a replay dispatches no tensor operation: no mode (the emulator's or a user's)
        # sees the re-issued work.
        with _disable_current_modes():
            self._graph.replay()

    def reset(self) -> None:
        if self._graph is not None and runtime().refusing_captures():
            for capture in runtime().refusing_captures():
                capture.invalidate("the reset of another graph")
            warnings.warn("CUDA warning: operation not permitted when stream is capturing", UserWarning, stacklevel=2)
        self._graph = None

    def pool(self) -> tuple[int, int]:
        if self._pool is None:
            self._pool = _pool_handle()
        return self._pool

    def enable_debug_mode(self) -> None:
        pass

    def debug_dump(self, debug_path: str) -> None:
        raise RuntimeError("seamgate's CUDA emulator cannot dump a CUDA graph")

    def __del__(self) -> None:
        # CUDA destroys the graph's executable with the object: refused (and the open capture
        # invalidated) while a capture that forbids it is open (H200: del_other_graph).
        try:
            if getattr(self, "_graph", None) is not None and self._runtime is runtime():
                for capture in runtime().refusing_captures():
                    capture.invalidate("the release of another graph")
        except Exception:
            pass


class graph(torch.cuda.graphs.graph):  # type: ignore[misc,name-defined]
    """``torch.cuda.graph``: torch's own context manager, with a default capture stream of its own."""

    default_capture_stream = None
