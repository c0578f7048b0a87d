"""The tests' one way to capture a body into a ``torch.cuda.CUDAGraph`` on a side stream, as torch wants it: the side
stream waits for the current one, the body runs between ``capture_begin`` and ``capture_end`` (which runs even when
the body raises, so no capture is left open behind a failed test), and the current stream waits for the side."""

from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

from seam.cuda_backend import end_generator_capture

#: The words a capture's end says after CUDA refused something inside it.
PREVIOUS_ERROR = "operation failed due to a previous error during capture"


def captured(graph: torch.cuda.CUDAGraph, body: Callable[[], Any], pool: Any = None) -> Any:
    """``body()``'s result, captured into ``graph`` (in ``pool`` when given) on a fresh side stream."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        graph.capture_begin(pool=pool)
        try:
            out = body()
        finally:
            graph.capture_end()
    torch.cuda.current_stream().wait_stream(side)
    return out


def warmed_and_captured(body: Callable[[], Any]) -> torch.cuda.CUDAGraph:
    """A graph of ``body``, run once on a side stream first (as engines warm up before they capture), then captured
    by ``torch.cuda.graph``."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        body()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        body()
    return graph


def replayed_with(graph: torch.cuda.CUDAGraph, inp: torch.Tensor, out: torch.Tensor, values: Any) -> list[Any]:
    """``out``'s values after a replay of ``graph`` with ``inp`` filled with each of ``values`` (``out`` zeroed first,
    so a replay that writes nothing shows)."""
    seen = []
    for value in values:
        inp.fill_(value)
        out.zero_()
        graph.replay()
        torch.cuda.synchronize()
        seen.append(out.tolist())
    return seen


def refused_at_its_end(body: Callable[[], Any]) -> None:
    """``body`` inside a capture on a side stream: CUDA refuses what it does, and the capture's end says so."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    try:
        with pytest.raises(RuntimeError, match=PREVIOUS_ERROR):
            with torch.cuda.graph(graph, stream=side):
                body()
    finally:
        end_generator_capture("cuda")  # torch 2.11 leaves it capturing after a refused end
