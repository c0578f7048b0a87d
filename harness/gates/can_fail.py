"""A gate that can never fail is refused: ``seamgate validate`` names each one and how to fix it.

A gate judged only on the working tree (G1 replay, G4 equivalence, any kind with no mutation or
ref as its source) reads the baseline row, and a red baseline stops the whole run before any gate
is judged (``BASELINE_RED``): such a gate could only ever PASS. It must name a ``proof`` mutation
whose row reds part of the same selection; the gate then FAILS when it does not
(``harness/judge/judges.py``). ``green_after`` on a red-first gate reads the same baseline, but the gate's
verdict also depends on its red run against the old code, so it can fail. Lane identity compares two
children's fingerprints, which can differ; one with no work key to compare is an ERROR when it is
judged (``harness/judge/lane.py``).
"""

from __future__ import annotations

from typing import Sequence

from harness.gates.kinds import kind
from harness.gates.model import Gate


def never_fail_problems(gates: Sequence[Gate]) -> list[str]:
    """One ``file:line:col: gate 'id': ...`` problem per gate whose verdict depends on no row it runs."""
    return [f"{g.origin}: gate {g.id!r}: judged only on the working tree, whose red baseline stops the run, so "
            "this gate could never fail; add `proof: {mutation: ID}` naming a mutation that reds part of its "
            "select (find one with `seamgate mutations reds ID --select PATH`)"
            for g in gates
            if kind(g.kind).never_fails_without_proof and g.source.kind == "tree" and g.proof is None]
