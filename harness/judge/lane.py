"""Lane identity: the same work fingerprint from a control lane and a subject lane, in child processes.

A capture-capable backend with capture switched off must do exactly the work of a backend that
cannot capture (the seed's double-forward bug produced identical values on a wasteful lane). Each
side runs ``module:callable(backend_name)`` in its own fresh child (switches are read once per
process) with its own environment; the callable returns a mapping such as
``{"copies": 4, "launches": 2, "lane": "eager", "output_digest": "..."}``.

Every key is compared. ``VALUE_KEYS`` are the outputs: they must be equal too, but they are
reported separately ("values IDENTICAL"), because equal values on different lanes is exactly the
case this gate exists for. The lane verdict (SAME-LANE / DIFFERENT-LANE) comes from the other keys,
which should count per-operation work (copies), not what a pool's free list can absorb (allocs).
A side whose mapping holds no such work key (``{}``, or a digest alone) is an ERROR: with nothing to
compare the check could never fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from harness.gates.model import Gate, LaneSide
from harness.rows.executor import Call, CallOutcome, Executor
from reports.outcome import ArmOutcome, Verdict

#: Keys that hold output values, not lane shape: compared, but reported apart from the lane.
VALUE_KEYS: frozenset[str] = frozenset({"output_digest", "values_digest", "logits_digest", "output"})


@dataclass(frozen=True)
class LaneComparison:
    """Both sides' fingerprints and what differs between them."""

    control: Mapping[str, Any]
    subject: Mapping[str, Any]
    #: Lane keys whose values differ (or that one side lacks).
    lane_diff: tuple[str, ...]
    #: Value keys whose values differ.
    value_diff: tuple[str, ...]

    @property
    def same_lane(self) -> bool:
        return not self.lane_diff

    @property
    def values_identical(self) -> bool:
        return not self.value_diff

    def describe(self) -> str:
        """``DIFFERENT-LANE: copies control=4 subject=5; values IDENTICAL``."""
        keys = self.lane_diff or tuple(sorted(k for k in self.control if k not in VALUE_KEYS))
        numbers = ", ".join(f"{k} control={self.control.get(k)!r} subject={self.subject.get(k)!r}" for k in keys)
        lane = "SAME-LANE" if self.same_lane else "DIFFERENT-LANE"
        values = "values IDENTICAL" if self.values_identical else f"values DIFFER ({', '.join(self.value_diff)})"
        return f"{lane}: {numbers}; {values}"


def compare(control: Mapping[str, Any], subject: Mapping[str, Any]) -> LaneComparison:
    keys = sorted(set(control) | set(subject))
    differs = [k for k in keys if k not in control or k not in subject or control[k] != subject[k]]
    return LaneComparison(
        control=dict(control), subject=dict(subject),
        lane_diff=tuple(k for k in differs if k not in VALUE_KEYS),
        value_diff=tuple(k for k in differs if k in VALUE_KEYS),
    )


def side_call(gate: Gate, side: LaneSide, role: str, arm: str, tree: Path, timeout: float) -> Call:
    env = {**gate.env, **side.env, "SEAM_ARMS": arm}
    return Call(label=f"{gate.id} {role} {side.backend}", target=gate.fingerprint or "", arg=side.backend,
                tree=tree, env=env, timeout=timeout)


def judge_lane(gate: Gate, arm: str, executor: Executor, tree: Path, timeout: float) -> ArmOutcome:
    """Run both sides in fresh children and judge the comparison against ``expect.lane``."""
    if gate.control is None or gate.subject is None or not gate.fingerprint:
        raise ValueError(f"gate {gate.id}: a lane-identity gate needs fingerprint, control and subject")
    base = ArmOutcome(gate=gate.id, arm=arm, verdict=Verdict.PASS, kind=gate.kind, title=gate.title)
    sides = [executor.call(side_call(gate, s, role, arm, tree, timeout))
             for role, s in (("control", gate.control), ("subject", gate.subject))]
    bad = _side_trouble(sides)
    if bad is not None:
        return base.with_verdict(*bad)
    result = compare(sides[0].result, sides[1].result)
    facts = {"control": result.control, "subject": result.subject,
             "same_lane": result.same_lane, "values_identical": result.values_identical}
    return _verdict(gate, base, result, facts)


def _verdict(gate: Gate, base: ArmOutcome, result: LaneComparison, facts: dict[str, Any]) -> ArmOutcome:
    from dataclasses import replace

    wanted_same = (gate.expect.lane or "same") == "same"
    ok = result.values_identical and result.same_lane == wanted_same
    verdict = Verdict.PASS if ok else Verdict.FAIL
    expected = "" if ok else f" (expected {'SAME-LANE' if wanted_same else 'DIFFERENT-LANE'}, values IDENTICAL)"
    return replace(base, verdict=verdict, message=result.describe() + expected, facts=facts)


def _side_trouble(sides: list[CallOutcome]) -> tuple[Verdict, str] | None:
    for side in sides:
        if side.end == "timeout":
            return Verdict.TIMEOUT, f"{side.label}: {side.detail}"
        if side.end != "completed":
            return Verdict.ERROR, f"{side.label}: the fingerprint callable failed: {side.detail}"
        if not isinstance(side.result, dict):
            return Verdict.ERROR, f"{side.label}: the fingerprint must be a mapping, got {type(side.result).__name__}"
    for side in sides:  # both answered with mappings: a side with no work key would make the check vacuous
        if all(key in VALUE_KEYS for key in side.result):
            return Verdict.ERROR, (f"{side.label}: the fingerprint holds no work key, only "
                                   f"{sorted(side.result) or 'nothing'}: a lane check with no work to compare could "
                                   "never fail; return the work the side did (copies, launches, lane) beside its "
                                   "output digest")
    return None
