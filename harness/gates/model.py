"""A gate as a value: source state, test selection, environment, platform arms, expectation.

The gate-file loader (``harness.gates.gatefile``) builds these from YAML; the planner and executor
consume them. Every record is frozen: a gate never changes after it was validated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Mapping

from seam.arms import ARM_NAMES as ARM_NAMES  # the one registry of arms (seam/arms.py)
from mutations.model import Location

GateKind = Literal["replay", "isolation", "rule", "equivalence", "red-first", "lane-identity", "platforms"]
SourceKind = Literal["tree", "mutation", "ref"]


#: Where a gate was written (file, line, column): the same record the mutation catalog uses.
Origin = Location


@dataclass(frozen=True)
class SourceState:
    """Which code a run sees: the working tree, the tree with a named mutation, or a git ref."""

    #: ``tree`` (the working tree as is), ``mutation`` or ``ref``.
    kind: SourceKind = "tree"
    #: The named mutation's id (``kind == "mutation"``).
    mutation: str | None = None
    #: The git ref (``kind == "ref"``), e.g. ``origin/main``.
    ref: str | None = None
    #: Paths of the working tree laid over the ref's tree (the new tests), ``kind == "ref"`` only.
    overlay: tuple[str, ...] = ()

    def label(self) -> str:
        if self.kind == "mutation":
            return f"mutation {self.mutation}"
        if self.kind == "ref":
            return f"ref {self.ref}"
        return "working tree"


@dataclass(frozen=True)
class RedSet:
    """The exact set of test cases that must turn red; exactly one field is set."""

    #: Every case in these files red, and no case outside them.
    files: tuple[str, ...] | None = None
    #: Exactly these pytest node ids red.
    nodeids: tuple[str, ...] | None = None
    #: Exactly this many cases red (0: everything green).
    count: int | None = None


@dataclass(frozen=True)
class Counts:
    """Exact counts over the red part of a run, as the seeds state them ("3 cases, 0 passed, 7 failed")."""

    cases: int | None = None
    passed: int | None = None
    failed: int | None = None
    #: Failed assertions summed over the red cases (pytest's assertion hook counts them).
    assertions: int | None = None


@dataclass(frozen=True)
class LaneSide:
    """One side of a lane-identity check: a backend and the environment of its child process."""

    backend: str
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Expectation:
    """What must be observed for the gate to PASS."""

    red: RedSet = field(default_factory=lambda: RedSet(count=0))
    counts: Counts | None = None
    #: Red-first: after the red run, the same selection must be all green on the working tree.
    green_after: bool = False
    #: Lane identity: ``same`` or ``different``.
    lane: Literal["same", "different"] | None = None


@dataclass(frozen=True)
class Gate:
    """One declarative gate, validated."""

    id: str
    kind: GateKind
    title: str
    origin: Origin
    source: SourceState = field(default_factory=SourceState)
    #: pytest arguments: paths or node ids relative to the project root.
    select: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    arms: tuple[str, ...] = ("cpu-emulated",)
    #: Seconds per run; ``None`` derives it from the baseline's duration.
    timeout: float | None = None
    expect: Expectation = field(default_factory=Expectation)
    #: A gate on the working tree: the mutation whose row must red part of ``select`` (the proof
    #: that this gate's selection can turn red at all; without it the gate could never fail).
    proof: SourceState | None = None
    #: Red-first only: files whose COLLECTION error against the old code counts as red for each of
    #: their cases (a new test that imports a function the old code lacks).
    collection_errors_are_red: tuple[str, ...] = ()
    #: Lane identity only: ``module:callable`` returning a work fingerprint mapping.
    fingerprint: str | None = None
    control: LaneSide | None = None
    subject: LaneSide | None = None
