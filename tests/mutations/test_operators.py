"""The mutation operators' registry (``mutations/operators.py``) is the one place an operator is stated: the
model's literal and tuples, the catalog reader's keys and the apply path all follow it, and an operator added
to it alone is read from a catalog and applied."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import get_args

import pytest

from mutations import operators
from mutations.anchors import anchor_start
from mutations.apply import apply_mutation, apply_to_text
from mutations.catalog import load_catalog
from mutations.errors import MutationCatalogError
from mutations.model import NAMED_OPS, OP_KINDS, STEPS, Location, Mutation, OpKind
from mutations.operators import Edit, OperatorSpec

WHERE = Location("c.yaml", 1, 1)
SOURCE = "class A:\n    def f(self):\n        self.g()\n        return 1\n"
PATCH = "--- a/t.py\n+++ b/t.py\n@@ -3,2 +3,2 @@\n         self.g()\n-        return 1\n+        return 2\n"
#: One mutation of each operator that applies to ``SOURCE``: a new operator adds its sample here.
SAMPLES: dict[str, Mutation] = {
    "delete": Mutation(id="m", title="t", target="t.py", op="delete", location=WHERE, anchor="return 1"),
    "replace": Mutation(id="m", title="t", target="t.py", op="replace", location=WHERE, anchor="1", text="2"),
    "insert-before": Mutation(id="m", title="t", target="t.py", op="insert-before", location=WHERE,
                              anchor="return", text="x = 0\n        "),
    "insert-after": Mutation(id="m", title="t", target="t.py", op="insert-after", location=WHERE,
                             anchor="return 1", text=" + 1"),
    "patch": Mutation(id="m", title="t", target="t.py", op="patch", location=WHERE, patch=PATCH),
    "replace-def": Mutation(id="m", title="t", target="t.py", op="replace-def", location=WHERE, name="A.f",
                            text="def f(self):\n    return 3\n"),
    "delete-call": Mutation(id="m", title="t", target="t.py", op="delete-call", location=WHERE, name="A.f",
                            anchor="self.g"),
    "replace-in-def": Mutation(id="m", title="t", target="t.py", op="replace-in-def", location=WHERE, name="A.f",
                               anchor="return 1", text="return 4"),
}


def test_the_model_literal_and_tuples_name_exactly_the_registry_operators_in_order() -> None:
    names = tuple(spec.name for spec in operators.OPERATORS)
    assert get_args(OpKind) == (*names, STEPS), "mutations/model.py's OpKind literal must list the registry, then steps"
    assert OP_KINDS == names == operators.names()
    assert NAMED_OPS == tuple(spec.name for spec in operators.OPERATORS if spec.anchoring == "name")
    assert NAMED_OPS == ("replace-def", "delete-call", "replace-in-def")


def test_every_operator_has_a_sample_and_each_sample_applies() -> None:
    assert tuple(SAMPLES) == operators.names()
    for op, mutation in SAMPLES.items():
        assert apply_to_text(SOURCE, mutation) != SOURCE, op


@pytest.mark.parametrize("op", list(SAMPLES))
def test_applying_an_operator_goes_through_its_entrys_edit_and_nothing_else(
        op: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, Mutation]] = []

    def spy(text: str, mutation: Mutation) -> Edit:
        seen.append((text, mutation))
        return Edit(0, 0, "SPIED ", notes=("spied",))

    spied = tuple(dataclasses.replace(spec, edit=spy) if spec.name == op else spec for spec in operators.OPERATORS)
    monkeypatch.setattr(operators, "OPERATORS", spied)
    applied = apply_mutation(SOURCE, SAMPLES[op])
    assert seen == [(SOURCE, SAMPLES[op])]
    assert (applied.text, applied.notes) == ("SPIED " + SOURCE, ("spied",))


def test_each_entrys_edit_is_one_span_that_gives_the_applied_text() -> None:
    for op, mutation in SAMPLES.items():
        edit = operators.operator(op).edit(SOURCE, mutation)
        assert 0 <= edit.start <= edit.end <= len(SOURCE), op
        assert edit.apply(SOURCE) == apply_to_text(SOURCE, mutation), op
    assert operators.operator("delete").edit(SOURCE, SAMPLES["delete"]) == Edit(SOURCE.index("return 1"),
                                                                                 SOURCE.index("return 1") + 8, "")


def test_a_patchs_edit_spans_its_first_to_its_last_change() -> None:
    edit = operators.operator("patch").edit(SOURCE, SAMPLES["patch"])
    assert (SOURCE[edit.start:edit.end], edit.replacement) == ("1", "2")
    rng = random.Random(25)
    for _ in range(200):
        old = "".join(rng.choice("ab\n") for _ in range(rng.randrange(8)))
        new = "".join(rng.choice("ab\n") for _ in range(rng.randrange(8)))
        between = Edit.between(old, new)
        assert between.apply(old) == new and 0 <= between.start <= between.end <= len(old), (old, new)


def test_an_unknown_operation_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="mutation 'm': unknown operation 'nope'"):
        apply_to_text(SOURCE, dataclasses.replace(SAMPLES["delete"], op="nope"))  # type: ignore[arg-type]


def _shout(text: str, mutation: Mutation) -> Edit:
    """An invented operator: the anchor (found as ``delete`` finds it) written in capitals."""
    start = anchor_start(text, mutation)
    return Edit(start, start + len(mutation.anchor), mutation.anchor.upper() + mutation.text)


SHOUT = OperatorSpec("shout", "text", _shout, fields=(("at", "anchor"), ("suffix", "text")), required=("at",))


def test_an_operator_registered_only_in_the_registry_is_read_from_a_catalog_and_applied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "t.py").write_text("x = 1\nreturn_value = 2\n")
    catalog = tmp_path / "c.yaml"
    catalog.write_text("version: 1\nmutations:\n"
                       "  - {id: one, title: t, target: t.py, shout: {at: return_value}}\n"
                       "  - {id: two, title: t, target: t.py, shout: {at: 'x', suffix: ' # loud'}, occurrence: 1}\n"
                       "  - {id: three, title: t, target: t.py, steps: [{shout: {at: 'x'}}, {delete: '2'}]}\n")
    with pytest.raises(MutationCatalogError, match="unknown key 'shout'"):
        load_catalog([catalog], project_root=tmp_path)
    monkeypatch.setattr(operators, "OPERATORS", (*operators.OPERATORS, SHOUT))
    one, two, three = load_catalog([catalog], project_root=tmp_path)
    assert (one.op, one.anchor, one.text, two.text, two.occurrence, three.ops) == (
        "shout", "return_value", "", " # loud", 1, ("shout", "delete"))
    text = "x = 1\nreturn_value = 2\n"
    assert apply_to_text(text, one) == "x = 1\nRETURN_VALUE = 2\n"
    assert apply_to_text(text, two) == "X # loud = 1\nreturn_value = 2\n"
    assert apply_to_text(text, three) == "X = 1\nreturn_value = \n"


def test_an_invented_operators_fields_and_rules_come_from_its_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(operators, "OPERATORS", (*operators.OPERATORS, dataclasses.replace(SHOUT, occurrence=False)))
    (tmp_path / "t.py").write_text("x = 1\n")
    catalog = tmp_path / "c.yaml"
    catalog.write_text("version: 1\nmutations:\n"
                       "  - {id: one, title: t, target: t.py, shout: {suffix: s}}\n"
                       "  - {id: two, title: t, target: t.py, shout: {at: x, loud: yes}, occurrence: 1}\n")
    with pytest.raises(MutationCatalogError) as caught:
        load_catalog([catalog], project_root=tmp_path)
    problems = "\n".join(caught.value.problems)
    assert "mutation 'one' shout: missing required key 'at'; add it" in problems
    assert "mutation 'two' shout: unknown key 'loud'" in problems
    assert "mutation 'two': 'occurrence' has no meaning for shout; remove it" in problems


@pytest.mark.parametrize("broken, words", [
    (dict(fields=(("at", "anchor"),), required=("where",)), "required keys ('where',) are not all in fields"),
    (dict(fields=(("at", "anchor"), ("at", "text"))), "each key and each Mutation field once"),
    (dict(fields=(("at", "anchor"),), refuse_unchanged=True), "refuse_unchanged compares anchor and text"),
    (dict(anchoring="diff", fields=(("at", "anchor"),)), "a diff is one string"),
])
def test_an_entry_that_could_not_be_read_consistently_is_refused_when_it_is_written(broken: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        dataclasses.replace(SHOUT, **broken)
