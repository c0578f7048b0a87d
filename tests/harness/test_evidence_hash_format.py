"""An evidence hash is a stored format: records written by a seamgate of today must match tomorrow.

A GPU arm's record (``evidence/*.json``) keeps the hash of what its verdict depended on, and a later run
compares it with the hash it computes over its own tree (``harness/results/evidence.py``). Both sides run
the same function, so a change in how it frames the bytes (a separator, a mark, the order of the keys)
passes every comparison of two hashes computed today, and turns every stored record STALE the day it
ships. These goldens pin the bytes: ``evidence_hash`` (scheme 2) and ``gate_hash`` (records of an older
seamgate, which must keep matching as they were written). A deliberate change of what a hash covers bumps
``_SCHEME`` and these goldens together, and says in its commit that stored evidence turns STALE.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness.gates.model import RedSet
from harness.results.evidence import _canonical, evidence_hash, gate_hash
from tests.reports.fixture_projects import gate, mutation, write_project

TREE = {
    "calc/__init__.py": "",
    "calc/ops.py": '"""Ops."""\n\n\ndef add(a, b):\n    return a + b  # the sum\n',
    "calc/other.py": "def mul(a, b):\n    return a * b\n",
    "tests/conftest.py": "",
    "tests/test_add.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
#: The code files of the tree, as ``code_under_test`` would list them (given, so the golden depends on this file only).
CODE = ("calc/__init__.py", "calc/ops.py", "calc/other.py")
MUT = mutation("add-off-by-one", "return a + b", "return a + b + 1")
GATE = gate("g", mutation="add-off-by-one", select=("tests/test_add.py",), red=RedSet(files=("tests/test_add.py",)))
GATE_HASH = "16993ee681b1ee6a68a2cacfae687109ea7b1bce461d2bdf212edd14e9f090c1"
EVIDENCE_HASH = "1fe9144b3cebf9421d36ce8fa978578923e96b4386677c315cba4e23b385777f"


def _project(root: Path) -> Path:
    return write_project(root, TREE)


def test_the_evidence_hash_of_a_fixed_tree_is_the_recorded_one(tmp_path: Path) -> None:
    # calc/ops.py in full, calc/gone.py listed but gone, calc/other.py and calc/__init__.py as skeletons
    digest, full = evidence_hash(_project(tmp_path / "p"), GATE, MUT, ("calc/ops.py", "calc/gone.py"), CODE)
    assert full == ("calc/gone.py", "calc/ops.py", "tests/conftest.py", "tests/test_add.py")
    assert digest == EVIDENCE_HASH, (
        f"evidence_hash of the fixed tree is {digest}: every stored record would turn STALE. If the change is "
        "meant, bump _SCHEME in harness/results/evidence.py, update EVIDENCE_HASH and say so in the commit")


def test_the_hash_of_an_older_record_is_still_computed_as_it_was_written(tmp_path: Path) -> None:
    digest = gate_hash(_project(tmp_path / "p"), GATE, MUT, CODE)
    assert digest == GATE_HASH, (
        f"gate_hash of the fixed tree is {digest}: the records of older seamgates (no hashed_files) would all "
        "turn STALE; gate_hash is their format and stays as it was written")


def test_a_file_gone_hashes_as_gone_not_as_an_error_and_not_as_empty(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    gone, _ = evidence_hash(project, GATE, MUT, ("calc/gone.py",), CODE)
    (project / "calc/gone.py").write_text("")
    empty, _ = evidence_hash(project, GATE, MUT, ("calc/gone.py",), CODE)
    assert gone != empty


@dataclasses.dataclass(frozen=True)
class _Entry:
    name: str
    origin: str
    location: str
    tags: frozenset[str]


def test_canonical_data_sorts_what_has_no_order_keeps_what_has_one_and_drops_where_it_was_written() -> None:
    entry = _Entry("e", origin="gates/a.yaml:3", location="mutations/m.yaml:9", tags=frozenset({"b", "a", "c"}))
    value = {2: (3, 1), "b": [entry, None, 1.5, True], "a": {"z", "y"}, 1: Path("x/y")}
    assert _canonical(value) == {
        "1": "x/y", "2": [3, 1], "a": ["y", "z"], "b": [{"name": "e", "tags": ["a", "b", "c"]}, None, 1.5, True]}
    assert list(_canonical(value)) == ["1", "2", "a", "b"]
    assert _canonical(_Entry) == str(_Entry)  # a class is not a record: its text
    # a set's items in the order of their JSON text, so items of mixed types sort too
    assert _canonical({"a", "a!"}) == ["a!", "a"] and _canonical(frozenset({1, "x"})) == ["x", 1]
