"""``GraphedStep``: one driver's decode step, captured once through the seam and replayed after.

The lane is decided ONCE, by the driver's admission predicate, before any work runs:

* ``capture``: the first step runs ``capture_one`` (an eager warm pass, ``synchronize``, then a
  ``GraphCaptureScope`` over the step's own ``BreakableGraph``), and EVERY step, the first included,
  then replays the graph through ``BreakableGraph.replay``. Nothing inside a capture really ran, so
  the outputs are read only after a replay.
* ``eager``: exactly one ``backend.launch(forward)`` per step, no warm pass and no scope.

Why the predicate must know ``SEAM_CUDAGRAPH`` (seed 000, #1352): the scope reads that switch
itself and goes INERT, running its body eagerly. A predicate that admits the capture lane on a
capture-capable backend with the switch off therefore pays the warm pass AND the whole forward again
inside the inert scope, every step, with identical values. ``capture_admitted`` rules that lane out.
"""

from __future__ import annotations

from typing import Callable, Literal, Sequence

import torch

from seam import (
    Backend,
    BreakableGraph,
    CaptureMode,
    PersistentStepInput,
    capture_one,
    cudagraph_enabled,
    driver_graph_enabled,
)

Lane = Literal["capture", "eager"]


def capture_admitted(backend: Backend, driver: str) -> bool:
    """Whether ``driver`` may take the capture lane: a scope would really capture, and its switch is on."""
    return backend.can_capture and cudagraph_enabled() and driver_graph_enabled(driver)


def persistent_input(backend: Backend, shape: tuple[int, ...], dtype: torch.dtype = torch.int64) -> PersistentStepInput:
    """A capture-stable step input over a fresh device buffer of ``shape`` (the caller keeps it)."""
    return PersistentStepInput().bind(backend, backend.alloc(shape, dtype))


class GraphedStep:
    """Run ``forward`` on the lane chosen at construction; capture on the first step, replay after."""

    def __init__(
        self,
        backend: Backend,
        forward: Callable[[], torch.Tensor],
        *,
        admitted: bool,
        mode: CaptureMode = CaptureMode.FULL,
        inputs: Sequence[PersistentStepInput | torch.Tensor] = (),
        warmups: int = 1,
    ) -> None:
        self.backend = backend
        self.queue = backend.default_queue()
        self.forward = forward
        self.mode = mode
        #: The lane every step of this driver takes.
        self.lane: Lane = "capture" if admitted else "eager"
        self._inputs = tuple(inputs)
        self._warmups = warmups
        self.graph: BreakableGraph | None = None
        self._output: torch.Tensor | None = None

    def run(self) -> torch.Tensor:
        """One step's output, copied ON THE QUEUE (on CUDA a read on another stream would race the replay)."""
        with self.backend.use_queue(self.queue):
            return self._run_on_queue().clone()

    def _run_on_queue(self) -> torch.Tensor:
        if self.lane == "eager":
            return self.backend.launch(self.forward)
        if self.graph is None:
            captured = capture_one(self._launch, backend=self.backend, graph=self._new_graph,
                                   warmups=self._warmups, queue=self.queue)
            if captured.inert:  # only a predicate that ignores SEAM_CUDAGRAPH gets here: #1352
                return captured.output
            self.graph, self._output = captured.graph, captured.output
        self.graph.replay(self.queue)
        return self._output  # type: ignore[return-value]

    def close(self) -> None:
        """Release the captured graph (a later step captures again)."""
        if self.graph is not None:
            self.graph.destroy()
            self.graph = None

    def _launch(self) -> torch.Tensor:
        return self.backend.launch(self.forward)

    def _new_graph(self) -> BreakableGraph:
        graph = BreakableGraph(self.backend, self.mode)
        for value in self._inputs:
            graph.register_input(value)
        return graph
