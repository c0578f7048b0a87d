"""The result model: what one pytest run observed, and what a gate's arm was judged to be.

Everything here is a frozen value built by the harness and read by the renderers (JSON, JUnit,
terminal). Nothing in ``reports`` imports ``harness``: verdicts and outcomes are plain data.

Vocabulary, after the seeds:

- a *case* is one pytest test item (one node id);
- a *run* is one pytest process over a selection on one source state and one platform arm;
- a gate's *arm outcome* is the verdict for that gate on that arm, with the message that says why.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping

#: What one case did. ``error`` is collection, import, setup or teardown trouble: never a "red".
CaseKind = Literal["passed", "failed", "error", "skipped", "owed", "xfailed", "xpassed"]

#: How a run ended: pytest finished (whatever it found), or the harness had to stop it.
RunEnd = Literal["completed", "timeout", "crash"]

#: A skip whose reason starts with this prefix is an arm that could not run here: OWED, never green.
OWED_PREFIX = "OWED:"


class Verdict(str, enum.Enum):
    """The judgement on one gate arm."""

    #: The expectation was met exactly.
    PASS = "PASS"
    #: The expectation was not met: an extra red case, a missing one, wrong counts, lane differs.
    FAIL = "FAIL"
    #: The gate could not be judged: the source broke import or collection, a mutation no longer
    #: applies, pytest refused its arguments.
    ERROR = "ERROR"
    #: A run did not finish within its time limit; its process group was killed.
    TIMEOUT = "TIMEOUT"
    #: A run's process died without pytest finishing (a signal, ``os._exit``, no JUnit report).
    CRASH = "CRASH"
    #: The arm could not run on this machine; the reason says what it needs.
    OWED = "OWED"
    #: Measured evidence whose code hash no longer matches the code under test.
    STALE = "STALE"


@dataclass(frozen=True)
class CaseOutcome:
    """One test case as pytest reported it."""

    #: pytest node id, e.g. ``tests/test_x.py::test_b`` (reconstructed when the plugin did not run).
    nodeid: str
    kind: CaseKind
    #: The failure, error or skip message (the skip reason for ``owed``).
    message: str = ""
    #: Assertions that passed in this case (pytest's ``pytest_assertion_pass`` hook); ``None``: not
    #: counted (the hook is off unless the gate says ``count_assertions: true``).
    assertions_passed: int | None = 0
    #: Assertions that failed in this case (pytest stops a case at its first failed assertion).
    assertions_failed: int = 0
    #: Seconds, as JUnit recorded them.
    duration: float = 0.0
    #: Not run in this source state: copied from the baseline because the case's recorded reach
    #: misses every changed line (``harness/reach/reach.py``; ``--prove`` runs every case instead).
    inferred: bool = False
    #: Not run in this invocation: taken from the newest kept run, which ran it on the same source
    #: state, because no change since then reaches it (``harness/reach/incremental.py``; ``--no-reuse`` runs it).
    carried: bool = False

    @property
    def red(self) -> bool:
        """A failed case: the only kind a mutation may be credited with."""
        return self.kind == "failed"

    @property
    def file(self) -> str:
        return self.nodeid.split("::", 1)[0]

    @property
    def assertions(self) -> int | None:
        """Passed plus failed assertions; ``None`` when passing ones were not counted."""
        if self.assertions_passed is None:
            return None
        return self.assertions_passed + self.assertions_failed


@dataclass(frozen=True)
class RunOutcome:
    """What one pytest run observed: its cases and how the process ended."""

    #: Human label of the run ("baseline cpu-emulated", "mutation m1 cpu-emulated").
    label: str
    end: RunEnd
    #: pytest's exit code (``None`` when the process was killed or crashed).
    exit_code: int | None
    cases: tuple[CaseOutcome, ...] = ()
    #: Wall seconds from request to exit, as the harness measured it.
    wall: float = 0.0
    #: Seconds pytest's own session took (from the counting plugin; 0.0 when unknown).
    session: float = 0.0
    #: Why the run ended badly: the signal, the timeout, the missing report.
    detail: str = ""
    #: Where the run's stdout/stderr went (for the message of an ERROR or CRASH).
    log: str = ""

    def of_kind(self, *kinds: CaseKind) -> tuple[CaseOutcome, ...]:
        return tuple(c for c in self.cases if c.kind in kinds)

    @property
    def red(self) -> tuple[CaseOutcome, ...]:
        return self.of_kind("failed")

    @property
    def errors(self) -> tuple[CaseOutcome, ...]:
        return self.of_kind("error")

    @property
    def owed(self) -> tuple[CaseOutcome, ...]:
        return self.of_kind("owed")

    def summary(self) -> str:
        """``"3 cases, 0 passed, 16 assertions, 7 failed"`` in the seeds' form, plus the exit."""
        return count_phrase(self.cases) + f", exit {self.exit_code}"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``"1 case"``, ``"0 cases"``, ``"2 cases"``: a count and its noun, singular only for one
    (``plural`` for a noun that does not just take an s: ``counted(n, "entry", "entries")``)."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


def count_phrase(cases: Iterable[CaseOutcome]) -> str:
    """State cases as the seeds do: cases, passed, assertions, failed assertions.

    When any case's passing assertions were not counted, the phrase says so ("assertions not
    counted") rather than print a total that would read as 0 or too few, and its "failed" counts
    failed CASES, as ``expect.counts.failed`` does ("3 cases, 0 passed, 2 failed, assertions not
    counted"); with assertions counted the seeds' "A assertions, F failed" reads as F of A failed.
    """
    cases = tuple(cases)
    passed = sum(1 for c in cases if c.kind == "passed")
    failed = sum(c.assertions_failed for c in cases)
    if any(c.assertions_passed is None for c in cases):
        failed_cases = sum(1 for c in cases if c.kind == "failed")
        return f"{counted(len(cases), 'case')}, {passed} passed, {failed_cases} failed, assertions not counted"
    assertions = sum(c.assertions_passed + c.assertions_failed for c in cases)  # type: ignore[operator]
    return f"{counted(len(cases), 'case')}, {passed} passed, {counted(assertions, 'assertion')}, {failed} failed"


@dataclass(frozen=True)
class Provenance:
    """Where and on what code an arm was measured; STALE when the code hash no longer matches."""

    arm: str
    #: Device name ("cpu" or e.g. "NVIDIA H200").
    device: str
    #: Compute capability ("9.0"), empty on CPU.
    capability: str = ""
    #: GPU driver version, empty when none or unknown.
    driver: str = ""
    torch: str = ""
    #: ``git rev-parse HEAD`` of the project, empty outside git.
    commit: str = ""
    #: sha256 of what the verdict depends on (``harness/results/evidence.py``, ``evidence_hash``).
    code_hash: str = ""
    #: The files that hash read in full, relative paths, sorted; ``None``: a record of an older seamgate,
    #: whose hash read every file under the code roots byte for byte (``gate_hash``).
    hashed_files: tuple[str, ...] | None = None

    def stale_against(self, current_hash: str) -> bool:
        """True when this measurement was taken on different code than ``current_hash`` names."""
        return self.code_hash != current_hash

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {k: v for k, v in self.__dict__.items() if k != "hashed_files"}
        if self.hashed_files is not None:
            data["hashed_files"] = list(self.hashed_files)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Provenance:
        """``TypeError`` when ``hashed_files`` is there and not a list of paths."""
        files = data.get("hashed_files")
        if files is not None and not (isinstance(files, list) and all(isinstance(f, str) for f in files)):
            raise TypeError(f"provenance hashed_files must be a list of relative paths, not {files!r}")
        return cls(**{k: str(data.get(k, "")) for k in cls.__dataclass_fields__ if k != "hashed_files"},
                   hashed_files=None if files is None else tuple(files))


def code_hash(root: Path, files: Iterable[str]) -> str:
    """sha256 over the named files (relative paths, sorted) and their bytes."""
    digest = hashlib.sha256()
    for rel in sorted(set(files)):
        digest.update(rel.encode() + b"\0")
        digest.update((root / rel).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class ArmOutcome:
    """The verdict on one gate for one platform arm, and the evidence behind it."""

    gate: str
    arm: str
    verdict: Verdict
    #: Why: "extra red: tests/x.py::test_b", "OWED: cuda arm needs ...", "SAME-LANE ...".
    message: str = ""
    #: The kind of gate (``rule``, ``red-first``, ...), for the reports.
    kind: str = ""
    title: str = ""
    #: The runs behind the verdict, in the order they ran.
    runs: tuple[RunOutcome, ...] = ()
    provenance: Provenance | None = None
    #: Extra structured facts (lane fingerprints, counts) for JSON readers.
    facts: Mapping[str, Any] = field(default_factory=dict)

    def with_verdict(self, verdict: Verdict, message: str) -> ArmOutcome:
        return replace(self, verdict=verdict, message=message)


@dataclass(frozen=True)
class Report:
    """Everything one ``seamgate run`` found: baseline trouble, arm outcomes, interruption."""

    outcomes: tuple[ArmOutcome, ...] = ()
    #: Red baseline runs (non-empty means nothing was judged).
    baseline_red: tuple[RunOutcome, ...] = ()
    #: True when SIGINT/SIGTERM stopped the run; ``outcomes`` is what finished before.
    interrupted: bool = False
    #: Gates planned but not judged (interrupted, or skipped by a red baseline).
    unfinished: tuple[str, ...] = ()

    def verdicts(self) -> tuple[Verdict, ...]:
        return tuple(o.verdict for o in self.outcomes)
