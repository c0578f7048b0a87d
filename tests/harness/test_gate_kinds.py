"""The gate kinds' registry (``harness/gates/kinds.py``) is the one place a kind is stated: the
model's literal, the schema, the judges, the never-fail refusal and the docs table all agree with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

from harness.gates import kinds
from harness.gates.can_fail import never_fail_problems
from harness.gates.gatefile import GATE_KINDS
from harness.gates.model import Gate, GateKind
from harness.judge.judges import JUDGES, RUNS_ITS_OWN
from mutations.model import Location

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "harness/gates/gate_schema.json").read_text())


def _schema_rule(kind_names: set[str]) -> dict:
    """The ``allOf`` entry of the gate schema whose ``if`` names exactly these kinds."""
    for rule in SCHEMA["$defs"]["gate"]["allOf"]:
        kind = rule["if"]["properties"]["kind"]
        if set(kind.get("enum", [kind.get("const")])) == kind_names:
            return rule
    raise AssertionError(f"gate_schema.json has no rule for the kinds {sorted(kind_names)}")


def test_the_model_literal_and_the_reader_name_exactly_the_registry_kinds_in_order() -> None:
    assert get_args(GateKind) == kinds.KIND_NAMES
    assert GATE_KINDS == kinds.KIND_NAMES


def test_the_schema_kind_enum_and_its_kind_rules_follow_the_registry() -> None:
    assert tuple(SCHEMA["$defs"]["gate"]["properties"]["kind"]["enum"]) == kinds.KIND_NAMES
    lane = {spec.name for spec in kinds.KINDS if spec.lane_fields}
    assert _schema_rule(lane)["then"]["required"] == ["fingerprint", "control", "subject", "expect"]
    changed = {spec.name for spec in kinds.KINDS if spec.source == "changed"}
    assert changed == {spec.name for spec in kinds.KINDS if spec.red_first_fields}, \
        "the schema ties red-first's fields to its source rule; split the rule in gate_schema.json"
    assert _schema_rule(changed)["then"]["required"] == ["source"]
    mutation = {spec.name for spec in kinds.KINDS if spec.source == "mutation"}
    assert _schema_rule(mutation)["then"]["properties"]["source"]["required"] == ["mutation"]


def test_every_kind_has_its_registry_judge_and_only_lane_identity_runs_its_own_children() -> None:
    assert set(JUDGES) == set(kinds.KIND_NAMES)
    assert RUNS_ITS_OWN == {"lane-identity"}
    assert JUDGES["isolation"] is JUDGES["replay"] and JUDGES["red-first"] is not JUDGES["replay"]


def test_a_kind_that_never_fails_without_proof_is_refused_on_the_working_tree_and_lane_identity_is_not() -> None:
    where = Location("gates/g.yaml", 1, 1)
    refused = {kind for kind in kinds.KIND_NAMES
               if never_fail_problems([Gate(id="g", kind=kind, title="t", origin=where)])}  # type: ignore[arg-type]
    assert refused == set(kinds.KIND_NAMES) - {"lane-identity"}


def test_the_docs_kinds_table_is_the_registry_table() -> None:
    text = (REPO / "docs/gates.md").read_text()
    assert kinds.docs_table() in text, ("docs/gates.md's kinds table differs from the registry; paste the output of "
                                         "`python -m harness.gates.kinds` over it")
