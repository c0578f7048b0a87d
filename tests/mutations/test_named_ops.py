"""Mutations anchored on a definition's qualified name survive edits elsewhere and refuse what rotted."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutations.apply import apply_to_text
from mutations.catalog import load_catalog
from mutations.check import check_mutation
from mutations.errors import MutationRotError
from mutations.model import Location, Mutation

SOURCE = '''class Driver:
    def step(self, tokens):
        self.refresh(tokens)
        self.scope.note_fork(self.side)
        return self.run()

    def lane(self):
        return "capture"


def run():
    return "capture"
'''
EDITED = '"""A module docstring added later, and a helper above everything."""\n\n\ndef helper():\n    return 1\n\n\n' + SOURCE


def named(op: str, name: str, anchor: str = "", text: str = "", occurrence: int | None = None) -> Mutation:
    return Mutation(id="m", title="t", target="pkg/mod.py", op=op, location=Location("c.yaml", 3, 5),  # type: ignore[arg-type]
                    anchor=anchor, text=text, occurrence=occurrence, name=name)


REPLACE_DEF = named("replace-def", "Driver.lane", text='def lane(self):\n    return "eager"\n')
DELETE_CALL = named("delete-call", "Driver.step", anchor="self.scope.note_fork")
REPLACE_IN_DEF = named("replace-in-def", "Driver.lane", anchor='"capture"', text='"eager"')


@pytest.mark.parametrize("mutation", [REPLACE_DEF, DELETE_CALL, REPLACE_IN_DEF], ids=lambda m: m.op)
def test_a_named_mutation_survives_an_unrelated_edit_elsewhere_in_the_file(mutation: Mutation) -> None:
    before, after = apply_to_text(SOURCE, mutation), apply_to_text(EDITED, mutation)
    assert after.endswith(before) and before != SOURCE


def test_replace_def_swaps_the_whole_method_at_its_indentation() -> None:
    out = apply_to_text(SOURCE, REPLACE_DEF)
    assert '    def lane(self):\n        return "eager"\n\n\ndef run():\n    return "capture"\n' in out


def test_delete_call_removes_only_that_statement() -> None:
    out = apply_to_text(SOURCE, DELETE_CALL)
    assert "note_fork" not in out and "self.refresh(tokens)\n        return self.run()" in out


def test_replace_in_def_changes_the_text_inside_the_definition_only() -> None:
    out = apply_to_text(SOURCE, REPLACE_IN_DEF)
    assert out.count('"eager"') == 1 and 'def run():\n    return "capture"' in out


@pytest.mark.parametrize("mutation, says", [
    (named("replace-def", "Driver.gone", text="def gone(self):\n    pass\n"), "definition 'Driver.gone' not found"),
    (named("delete-call", "Driver.step", anchor="self.scope.note_join"), "0 statement(s) calling self.scope.note_join()"),
    (named("replace-in-def", "Driver.step", anchor="self.", text="this."), "found 4 times inside Driver.step"),
])
def test_a_named_mutation_whose_anchor_is_missing_or_ambiguous_is_rot(mutation: Mutation, says: str) -> None:
    with pytest.raises(MutationRotError, match=r"c\.yaml:3:5") as caught:
        apply_to_text(SOURCE, mutation)
    assert says in str(caught.value)


def test_a_name_defined_twice_is_rot_naming_both_lines() -> None:
    with pytest.raises(MutationRotError, match=r"defined 2 times \(lines 11, 15\)"):
        apply_to_text(SOURCE + "\n\ndef run():\n    return 2\n", named("replace-def", "run", text="def run():\n    return 3\n"))


def test_a_named_mutation_that_would_redefine_a_name_is_refused_by_check(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/mod.py").write_text(SOURCE)
    twice = named("replace-def", "run", text='def run():\n    return "eager"\n\n\ndef lane():\n    return 1\n\n\ndef lane():\n    return 2\n')
    result = check_mutation(tmp_path, twice)
    assert result.status == "lint" and "redefinition of unused 'lane'" in (result.problem or "")


def test_the_catalog_reads_each_named_operation_and_refuses_a_bad_name(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/mod.py").write_text(SOURCE)
    (tmp_path / "c.yaml").write_text('''version: 1
mutations:
  - id: a
    title: t
    target: pkg/mod.py
    replace-def: {name: Driver.lane, text: "def lane(self):\\n    return 1\\n"}
  - id: b
    title: t
    target: pkg/mod.py
    delete-call: {name: Driver.step, call: self.scope.note_fork}
  - id: c
    title: t
    target: pkg/mod.py
    replace-in-def: {name: Driver.lane, old: '"capture"', new: '"eager"'}
''')
    catalog = load_catalog([tmp_path / "c.yaml"], project_root=tmp_path)
    assert [(m.op, m.name) for m in catalog.mutations] == [
        ("replace-def", "Driver.lane"), ("delete-call", "Driver.step"), ("replace-in-def", "Driver.lane")]
    (tmp_path / "bad.yaml").write_text("version: 1\nmutations:\n  - id: a\n    title: t\n    target: pkg/mod.py\n"
                                       "    delete-call: {name: 'Driver step', call: x}\n")
    with pytest.raises(Exception, match=r"bad\.yaml:\d+:\d+: .*delete-call\.name"):
        load_catalog([tmp_path / "bad.yaml"], project_root=tmp_path)


def test_a_crlf_file_and_an_lf_anchor_is_said_as_line_endings_not_as_changed_code() -> None:
    crlf = SOURCE.replace("\n", "\r\n")
    m = Mutation(id="m", title="t", target="pkg/mod.py", op="delete", location=Location("c.yaml", 3, 5),
                 anchor="        self.refresh(tokens)\n        self.scope")
    with pytest.raises(MutationRotError, match="CRLF line endings and the anchor has LF ones"):
        apply_to_text(crlf, m)


@pytest.mark.parametrize("mutation", [
    named("replace-def", "Driver.gone", text="def gone(self):\n    pass\n"),
    named("delete-call", "Driver.gone", anchor="self.scope.note_fork"),
    named("replace-in-def", "Driver.gone", anchor='"capture"', text='"eager"'),
], ids=lambda m: m.op)
def test_each_named_operation_is_refused_when_its_name_is_missing(mutation: Mutation) -> None:
    with pytest.raises(MutationRotError, match=r"definition 'Driver\.gone' not found in pkg/mod\.py; update the name"):
        apply_to_text(SOURCE, mutation)


HOOKS = '''def setup(register):
    def hook():
        return 1
    register(hook)

    def hook():
        return 2
    register(hook)
'''


@pytest.mark.parametrize("source, mutation", [
    (SOURCE, named("replace-def", "run", text="def run():\n    return 1\n\n\ndef run():\n    return 2\n")),
    (HOOKS, named("delete-call", "setup", anchor="register", occurrence=1)),  # the first hook, now unused, is shadowed
    (SOURCE, named("replace-in-def", "Driver", anchor="def lane(self):", text="def step(self):")),
], ids=lambda v: getattr(v, "op", "source"))
def test_each_named_operation_is_refused_by_check_when_it_would_redefine_a_name(
    tmp_path: Path, source: str, mutation: Mutation
) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/mod.py").write_text(source)
    result = check_mutation(tmp_path, mutation)
    assert result.status == "lint" and "redefinition of unused" in (result.problem or "")
    assert "must not redefine a name" in (result.problem or "") and "c.yaml:3:5" in (result.problem or "")


def steps(*parts: Mutation) -> Mutation:
    return Mutation(id="m", title="t", target="pkg/mod.py", op="steps", location=Location("c.yaml", 2, 5), steps=parts)


def test_the_steps_of_a_mutation_apply_in_order_each_to_what_the_previous_left() -> None:
    both = steps(named("replace-in-def", "Driver.lane", anchor='"capture"', text='"eager"'),
                 named("replace-in-def", "Driver.lane", anchor='"eager"', text='"raw"'))
    assert 'return "raw"' in apply_to_text(SOURCE, both) and apply_to_text(SOURCE, both).count('"capture"') == 1
    assert apply_to_text(EDITED, both).endswith(apply_to_text(SOURCE, both)), "steps are name-anchored too"


def test_a_step_that_no_longer_applies_is_rot_naming_that_steps_place_in_the_catalog() -> None:
    gone = Mutation(id="m", title="t", target="pkg/mod.py", op="delete-call", location=Location("c.yaml", 9, 9),
                    anchor="self.scope.note_join", name="Driver.step")
    with pytest.raises(MutationRotError, match=r"c\.yaml:9:9"):
        apply_to_text(SOURCE, steps(REPLACE_IN_DEF, gone))


def test_the_catalog_reads_steps_and_refuses_a_malformed_list(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/mod.py").write_text(SOURCE)
    (tmp_path / "c.yaml").write_text('''version: 1
mutations:
  - id: a
    title: t
    target: pkg/mod.py
    steps:
      - replace-in-def: {name: Driver.lane, old: '"capture"', new: '"eager"'}
      - delete-call: {name: Driver.step, call: self.scope.note_fork}
''')
    (a,) = load_catalog([tmp_path / "c.yaml"], project_root=tmp_path).mutations
    assert a.op == "steps" and a.ops == ("replace-in-def", "delete-call") and a.steps[1].location.line == 8
    assert "note_fork" not in apply_to_text(SOURCE, a) and 'return "eager"' in apply_to_text(SOURCE, a)
    (tmp_path / "bad.yaml").write_text('''version: 1
mutations:
  - {id: b, title: t, target: pkg/mod.py, delete: x, steps: [{delete: y}]}
  - {id: c, title: t, target: pkg/mod.py, steps: []}
  - {id: d, title: t, target: pkg/mod.py, steps: [{delete: y, replace: {old: a, new: b}}]}
  - {id: e, title: t, target: pkg/mod.py, steps: [delete]}
  - {id: f, title: t, target: pkg/mod.py, steps: [{delete: y, colour: red}]}
''')
    with pytest.raises(Exception) as caught:
        load_catalog([tmp_path / "bad.yaml"], project_root=tmp_path)
    message = str(caught.value)
    assert "bad.yaml:3:" in message and "mutation 'b': 'delete' next to 'steps'" in message
    assert "mutation 'c': 'steps' must be a non-empty list" in message
    assert "mutation 'd' step 1: 2 operations (delete, replace)" in message
    assert "mutation 'e' step 1: a step is a mapping" in message
    assert "mutation 'f' step 1: unknown key 'colour'" in message
