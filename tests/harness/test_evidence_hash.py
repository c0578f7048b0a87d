"""Evidence hashes what a gate's verdict depends on: code under test, the gate, its tests, its mutation."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.results.evidence import EmptyHashError, gate_hash
from harness.gates.model import Origin, RedSet
from harness.results.platforms import code_under_test, hash_code_under_test
from tests.reports.fixture_projects import gate, mutation, write_project

MUT = mutation("add-off-by-one", "return a + b", "return a + b + 1")
GATE = gate("g", mutation="add-off-by-one", select=("tests/test_add.py",), red=RedSet(files=("tests/test_add.py",)))


def _hash(project: Path, g=GATE, m=MUT) -> str:
    return gate_hash(project, g, m, code_under_test(project))


@pytest.mark.parametrize("change", ["code under test", "selected test file", "conftest above it"])
def test_editing_a_file_the_verdict_depends_on_changes_the_hash(tmp_path: Path, change: str) -> None:
    project = write_project(tmp_path / "p", {"calc/__init__.py": "", "calc/ops.py": "def add(a, b):\n    return a + b\n",
                                            "tests/conftest.py": "", "tests/test_add.py": "def test_a():\n    pass\n",
                                            "tests/test_mul.py": "def test_m():\n    pass\n"})
    before = _hash(project)
    path = {"code under test": "calc/ops.py", "selected test file": "tests/test_add.py",
            "conftest above it": "tests/conftest.py"}[change]
    (project / path).write_text((project / path).read_text() + "# edited\n")
    assert _hash(project) != before


def test_editing_a_test_file_the_gate_does_not_select_keeps_the_hash(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p")
    before = _hash(project)
    (project / "tests/test_mul.py").write_text("def test_other():\n    pass\n")
    assert _hash(project) == before


def test_changing_the_gate_or_its_mutation_changes_the_hash_but_moving_the_gate_does_not(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p")
    before = _hash(project)
    assert _hash(project, g=dataclasses.replace(GATE, expect=dataclasses.replace(GATE.expect, red=RedSet(count=2)))) != before
    assert _hash(project, m=dataclasses.replace(MUT, text="return a - b")) != before
    assert _hash(project, g=dataclasses.replace(GATE, origin=Origin("other.yaml", 40, 3))) == before


def test_a_hash_over_zero_files_is_an_error_never_a_value(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", {"tests/README.txt": "no code"})
    with pytest.raises(EmptyHashError, match="no code under test"):
        hash_code_under_test(project)
    with pytest.raises(EmptyHashError, match="gate g: the code hash would cover no file"):
        gate_hash(project, dataclasses.replace(GATE, select=("tests/none",)), None, [])
