"""``StepDriver``: the start every reference driver shares, and the step machinery it runs on.

A driver is a backend, a ``DriverConfig``, the backend's default queue, seeded ``TinyWeights`` and
one step runner over the driver's ``_forward``. Which runner, which input buffers and which
admission predicate is the driver's ``machinery``:

* ``Machinery.SEAM`` (every driver as shipped): ``GraphedStep`` over pinned ``PersistentStepInput``s
  (token ids: ``StepTokenIds``), admitted by ``capture_admitted``;
* ``Machinery.RAW`` (the pre-migration machinery, kept as code in ``drivers.raw_step``): ``RawStep``
  over ``RawInput``s (``RawTokenIds``), admitted by ``raw_admitted``.

An ``unmigrate-<driver>`` mutation turns ONE driver's ``Machinery.SEAM`` into ``Machinery.RAW`` by name,
plus, for dense, draft and piecewise, the one line that driver really did differently before its
migration (``mutations/catalog/drivers.yaml``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable, ClassVar, Sequence, Union

import torch

from drivers.config import DriverConfig
from drivers.graphed_step import GraphedStep, capture_admitted, persistent_input
from drivers.raw_step import RawInput, RawStep, RawTokenIds, raw_admitted, raw_input
from drivers.step_token_ids import StepTokenIds
from drivers.tiny_model import TinyWeights
from seam import Backend, CaptureMode, PersistentStepInput

StepInput = Union[PersistentStepInput, RawInput]


class Machinery(Enum):
    """Which step machinery a driver runs on."""

    #: The seam: ``GraphedStep``, pinned ``PersistentStepInput``s, ``capture_admitted``.
    SEAM = "seam"
    #: Before the migration: ``RawStep``, plain copies, the driver's own switch only.
    RAW = "raw"


@dataclass(frozen=True)
class _Parts:
    """One machinery's step runner, input factories and admission predicate."""

    step: Callable[..., Union[GraphedStep, RawStep]]
    new_input: Callable[[Backend, tuple[int, ...]], StepInput]
    new_token_ids: Callable[[Backend, int], Union[StepTokenIds, RawTokenIds]]
    admitted: Callable[[Backend, str], bool]


_PARTS: dict[Machinery, _Parts] = {
    Machinery.SEAM: _Parts(GraphedStep, persistent_input, StepTokenIds, capture_admitted),
    Machinery.RAW: _Parts(RawStep, raw_input, RawTokenIds, raw_admitted),
}


class StepDriver:
    """The shared start of a driver: build inputs with ``new_input``, then ``start_step``; read ``lane``."""

    #: The driver's name: its rollback switch is ``SEAM_<NAME>_GRAPH``.
    name: ClassVar[str] = ""
    #: The machinery this driver runs on (each driver names it, so a mutation can switch one driver).
    machinery: ClassVar[Machinery] = Machinery.SEAM

    step_fn: Union[GraphedStep, RawStep]
    tokens: StepInput
    positions: StepInput

    def __init__(self, backend: Backend, cfg: DriverConfig, *, graph: bool | None) -> None:
        self.backend, self.cfg = backend, cfg
        self.queue = backend.default_queue()
        self.weights = TinyWeights.seeded(cfg, backend.to_device)
        #: ``None``: the admission predicate picks the lane; ``True``/``False`` force it.
        self.graph_forced = graph

    @property
    def _parts(self) -> _Parts:
        return _PARTS[self.machinery]

    def new_input(self, shape: tuple[int, ...]) -> StepInput:
        """A step input (int64) of ``shape`` on this driver's machinery."""
        return self._parts.new_input(self.backend, shape)

    def new_token_ids(self) -> Union[StepTokenIds, RawTokenIds]:
        """``[B, 1]`` token ids refreshed from a device source, on this driver's machinery."""
        return self._parts.new_token_ids(self.backend, self.cfg.slots)

    def capture_wanted(self) -> bool:
        """The admission predicate (asked once, when ``graph`` was not forced)."""
        return self._parts.admitted(self.backend, self.name)

    def start_step(self, mode: CaptureMode, *inputs: StepInput | torch.Tensor) -> None:
        """Choose the lane and build the step runner over ``_forward``; ``inputs`` are registered with its graph."""
        admitted = self.capture_wanted() if self.graph_forced is None else self.graph_forced
        self.step_fn = self._parts.step(self.backend, self._forward, admitted=admitted, mode=mode, inputs=inputs)

    def _forward(self) -> torch.Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define _forward")

    def run_step(self, tokens: Sequence[int], positions: Sequence[int]) -> torch.Tensor:
        """Refresh ``self.tokens`` then ``self.positions`` from host vectors, then run one step."""
        self.tokens.refresh_from_host(self.queue, list(tokens))
        self.positions.refresh_from_host(self.queue, list(positions))
        return self.step_fn.run()

    @property
    def lane(self) -> str:
        return self.step_fn.lane

    def close(self) -> None:
        """Release the captured graph(s)."""
        self.step_fn.close()
