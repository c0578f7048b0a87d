"""Judges: one per gate kind, one signature: ``(gate, arm, Seen) -> ArmOutcome``.

A gate is a pure function of the matrix rows it reads (``Seen``): its part of its source state's
row and its part of the baseline row. A gate kind names its judge in its entry of
``harness/gates/kinds.py``; a new way of judging adds one judge here. Lane identity is the one kind that runs its own children (a fingerprint per side), so
``Seen`` also carries what that needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from dataclasses import replace

from harness.gates.kinds import KINDS, JudgeName
from harness.gates.model import Gate
from harness.judge.evaluate import judge_red, trouble
from harness.judge.lane import judge_lane
from harness.judge.redfirst import judge_red_first
from reports.outcome import ArmOutcome, RunOutcome, Verdict, counted


@dataclass(frozen=True)
class Seen:
    """What a gate reads from the matrix (and, for lane identity, how to run its sides)."""

    #: The gate's part of its source state's row (the baseline row for a gate on the working tree).
    subject: RunOutcome | None = None
    #: The gate's part of the baseline row (the working tree, same arm and environment).
    baseline: RunOutcome | None = None
    #: The gate's part of its ``proof`` mutation's row (a gate on the working tree only).
    proof: RunOutcome | None = None
    #: Lane identity only: the executor, the source state's tree and the time limit per side.
    executor: Any = None
    tree: Path | None = None
    timeout: float = 10.0


Judge = Callable[[Gate, str, Seen], ArmOutcome]


def _red(gate: Gate, arm: str, seen: Seen) -> ArmOutcome:
    """Exactly the expected cases red in the gate's source state (``harness/judge/evaluate.py``); for a gate
    on the working tree with a ``proof``, that mutation must also red part of the same selection."""
    outcome = judge_red(gate, arm, _need(seen.subject, gate), what=gate.source.label())
    if gate.proof is None or outcome.verdict is not Verdict.PASS:
        return outcome
    return _proved(gate, outcome, _need(seen.proof, gate))


def _proved(gate: Gate, outcome: ArmOutcome, proof: RunOutcome) -> ArmOutcome:
    """PASS only when the proof mutation reds at least one case of the selection: it CAN fail."""
    what = f"proof {gate.proof.label() if gate.proof else ''}"
    bad = trouble(proof, what)
    runs = (*outcome.runs, proof)
    if bad is not None:
        return replace(outcome.with_verdict(*bad), runs=runs)
    red = proof.red
    if not red:
        return replace(outcome.with_verdict(Verdict.FAIL, f"{what} reds none of the {counted(len(proof.cases), 'case')} of "
                                            "this selection: the gate could never fail; name a mutation its "
                                            "cases catch (seamgate mutations reds ID)"), runs=runs)
    return replace(outcome, message=f"{outcome.message}; {what} reds {len(red)} of {counted(len(proof.cases), 'case')} "
                                    "(the selection can fail)", runs=runs)


def _red_first(gate: Gate, arm: str, seen: Seen) -> ArmOutcome:
    """Red against the old code with exact counts, then green on the working tree."""
    return judge_red_first(gate, arm, _need(seen.subject, gate), _need(seen.baseline, gate))


def _lane(gate: Gate, arm: str, seen: Seen) -> ArmOutcome:
    """The same work fingerprint from control and subject, each in a fresh child."""
    if seen.executor is None or seen.tree is None:
        raise ValueError(f"gate {gate.id}: a lane-identity judge needs an executor and a tree")
    return judge_lane(gate, arm, seen.executor, seen.tree, seen.timeout)


def _need(run: RunOutcome | None, gate: Gate) -> RunOutcome:
    if run is None:
        raise ValueError(f"gate {gate.id}: no row was filled for it")
    return run


#: Each judge by the name a kind's registry entry gives (``harness/gates/kinds.py``).
_BY_NAME: Mapping[JudgeName, Judge] = {"red": _red, "red-first": _red_first, "lane": _lane}

#: The judge of each gate kind.
JUDGES: Mapping[str, Judge] = {spec.name: _BY_NAME[spec.judge] for spec in KINDS}

#: Kinds whose judge runs children of its own instead of reading matrix rows.
RUNS_ITS_OWN = frozenset(spec.name for spec in KINDS if spec.runs_its_own)
