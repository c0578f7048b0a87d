"""A fidelity program's run, as a signature: the phase and seam error of the first failure, or values.

A program is written ONCE against the seam API and run on every arm. It drives a ``Probe``, which
knows which phase the program is in (``setup``, ``capture`` while the body runs, ``capture_end``
while the scope closes, ``replay``, ``after``), so the signature says WHERE the first error came
from, not only which one it was. Values are plain lists, read after a replay and a synchronize.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch

from seam import Backend, BreakableGraph, CaptureMode, GraphCaptureScope


@dataclass(frozen=True)
class Signature:
    """What a program did: ``ok`` with its values, or the phase and class of its first error."""

    phase: str
    error: str | None = None
    values: tuple[Any, ...] = ()

    def text(self) -> str:
        if self.error is not None:
            return f"{self.error} @ {self.phase}"
        return "ok " + ", ".join(str(v) for v in self.values)

    def to_json(self) -> dict[str, Any]:
        return {"phase": self.phase, "error": self.error, "values": [_plain(v) for v in self.values]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Signature":
        return cls(data["phase"], data.get("error"), tuple(_frozen(v) for v in data.get("values", ())))


def _plain(v: Any) -> Any:
    return list(_plain(x) for x in v) if isinstance(v, (list, tuple)) else v


def _frozen(v: Any) -> Any:
    return tuple(_frozen(x) for x in v) if isinstance(v, list) else v


@dataclass
class Probe:
    """The program's handle on a backend: capture, replay and read, each in its named phase."""

    b: Backend
    phase: str = "setup"
    values: list[Any] = field(default_factory=list)

    @property
    def q(self):  # noqa: ANN201 - the backend's default queue
        return self.b.default_queue()

    def dev(self, values: list[float] | float, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """A device tensor holding ``values`` (made before any capture)."""
        return self.b.to_device(torch.as_tensor(values, dtype=dtype))

    @contextlib.contextmanager
    def capture(self, graph: BreakableGraph | None = None, mode: CaptureMode = CaptureMode.FULL,
                queue: Any = None) -> Iterator[GraphCaptureScope]:
        g = graph if graph is not None else BreakableGraph(self.b, mode)
        self.last_graph = g
        self.phase = "capture"
        with torch.no_grad():
            scope = GraphCaptureScope(self.b, queue or self.q, g)
            with scope:
                yield scope
                self.phase = "capture_end"
        self.phase = "after"

    def replay(self, graph: BreakableGraph | None = None, **kw: Any) -> None:
        self.phase = "replay"
        (graph or self.last_graph).replay(**kw)
        self.phase = "after"

    def read(self, t: torch.Tensor, digits: int = 4) -> None:
        """Record ``t``'s values now (after a synchronize), rounded so arms compare on meaning."""
        self.phase = "read"
        self.b.synchronize()
        with torch.no_grad():
            v = t.detach().cpu().to(torch.float64).flatten().tolist()
        self.values.append(tuple(round(x, digits) for x in v))
        self.phase = "after"

    def note(self, value: Any) -> None:
        """Record a plain value (a bool, a count) as part of the signature."""
        self.values.append(value)


Program = Callable[[Probe], None]


def observe(program: Program, backend: Backend) -> Signature:
    """Run ``program`` on ``backend``; its signature (errors of any class are part of it)."""
    probe = Probe(backend)
    try:
        program(probe)
    except Exception as err:  # noqa: BLE001 - the error IS the observation
        return Signature(probe.phase, type(err).__name__)
    return Signature("ok", None, tuple(probe.values))
