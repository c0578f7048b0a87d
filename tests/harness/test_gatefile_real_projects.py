"""Gate files as real projects write them (issue 15): a mutation gate states what it expects; ``ref: HEAD~1`` is a ref."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness.test_gatefile import load, problems, root, write  # noqa: F401 - the fixture

_RULE = ("version: 1\ngates:\n  - id: r\n    kind: {kind}\n    source: {source}\n"
         "    select: [tests/seam/test_scope.py]\n{expect}")


@pytest.mark.parametrize("kind,source", [("rule", "{mutation: unmigrate-dense}"),
                                         ("isolation", "{mutation: unmigrate-moe}"),
                                         ("red-first", "{ref: origin/main, overlay: [tests/seam/test_scope.py]}")])
def test_a_gate_on_changed_code_without_expect_is_refused_not_read_as_all_green(root: Path, kind: str,
                                                                                  source: str) -> None:
    write(root, "g.yaml", _RULE.format(kind=kind, source=source, expect=""))
    text = problems(root)
    assert "gate 'r': missing 'expect'" in text and "expect: {red: {count: 0}}" in text and "g.yaml:3:5" in text


def test_a_gate_on_the_working_tree_without_expect_still_means_all_green(root: Path) -> None:
    write(root, "g.yaml", "version: 1\ngates:\n  - id: t\n    kind: replay\n    select: [tests/seam/test_scope.py]\n")
    [gate] = load(root)
    assert gate.expect.red.count == 0


@pytest.mark.parametrize("ref", ["HEAD~1", "HEAD^", "main~2", "v1.0^2", "origin/main"])
def test_relative_refs_are_accepted(root: Path, ref: str) -> None:
    write(root, "g.yaml", _RULE.format(kind="red-first", source=f"{{ref: '{ref}', overlay: [tests/seam/test_scope.py]}}",
                                       expect="    expect: {red: {count: 1}}\n"))
    [gate] = load(root)
    assert gate.source.ref == ref


@pytest.mark.parametrize("ref", ["-x", "a b", "~1", "HEAD~x", "a:b", "a..b"])
def test_what_is_not_a_ref_is_still_refused(root: Path, ref: str) -> None:
    write(root, "g.yaml", _RULE.format(kind="red-first", source=f"{{ref: '{ref}', overlay: [tests/seam/test_scope.py]}}",
                                       expect="    expect: {red: {count: 1}}\n"))
    assert "is not a git ref name" in problems(root)


def _doc_keys() -> dict[str, str]:
    """docs/gates.md's key table: {key: its 'required' cell}."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "gates.md"
    rows = [line.strip("|").split(" | ") for line in doc.read_text(encoding="utf-8").splitlines()
            if line.startswith("| `")]
    return {cells[0].strip(" `"): cells[1].strip() for cells in rows if len(cells) >= 3}


def test_docs_gates_md_says_expect_is_required_on_a_mutation_or_a_ref_as_the_validator_does(root: Path) -> None:
    write(root, "g.yaml", _RULE.format(kind="rule", source="{mutation: unmigrate-dense}", expect=""))
    refused = "gate 'r': missing 'expect'" in problems(root)
    keys = _doc_keys()
    required = keys.get("expect", "")
    assert refused and required.startswith("yes") and "mutation" in required and "ref" in required, (
        f"the validator refuses a gate on a mutation without 'expect' ({refused}); docs/gates.md's key table must "
        f"say so in an `expect` row (its 'required' cell: {required!r}; `expect.red` reads {keys.get('expect.red')!r})")
