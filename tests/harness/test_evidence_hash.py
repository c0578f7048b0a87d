"""Evidence hashes what a gate's verdict depends on: code under test, the gate, its tests, its mutation."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.results.evidence import EmptyHashError, evidence_hash, gate_hash
from harness.results.source_hash import normalized, skeleton
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
    with pytest.raises(EmptyHashError) as error:
        gate_hash(project, dataclasses.replace(GATE, select=("tests/none",)), None, [])
    assert str(error.value) == ("gate g: the code hash would cover no file (no code under test, no selected test "
                                "file); check [tool.seamgate] and the gate's select")


def test_the_evidence_hash_over_no_file_is_an_error_never_a_value(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", {"tests/README.txt": "no code"})
    with pytest.raises(EmptyHashError) as error:
        evidence_hash(project, dataclasses.replace(GATE, select=("tests/none",)), None, [], [])
    assert str(error.value) == ("gate g: the code hash would cover no file (no file its cases reached, no selected "
                                "test file); check [tool.seamgate] and the gate's select")


def test_the_evidence_hash_lists_what_it_read_in_full_and_reads_the_rest_as_skeletons(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", {"calc/ops.py": "def add(a, b):\n    return a + b\n",
                                            "calc/other.py": "K = 1\n\n\ndef f():\n    return K\n",
                                            "tests/test_add.py": "def test_a():\n    pass\n"})
    code = code_under_test(project)
    before, files = evidence_hash(project, GATE, MUT, ["calc/ops.py"], code)
    assert files == ("calc/ops.py", "tests/test_add.py")
    (project / "calc/other.py").write_text("K = 1\n\n\ndef f():\n    return K + 1\n")
    assert evidence_hash(project, GATE, MUT, ["calc/ops.py"], code)[0] == before  # a body no case ran
    (project / "calc/other.py").write_text("K = 2\n\n\ndef f():\n    return K + 1\n")
    assert evidence_hash(project, GATE, MUT, ["calc/ops.py"], code)[0] != before  # what importing it runs


SOURCE = b'"""Module."""\n\nimport os  # why\n\n\nclass A:\n    """A."""\n\n    x = "# kept"\n\n    def f(self):\n        """F."""\n        return f"{self.x}#"\n'


@pytest.mark.parametrize("edit", [
    (b"import os  # why\n", b"# a new comment\nimport os\n"),
    (b'"""Module."""\n', b'"""Another module docstring,\n\nover lines."""\n\n\n'),
    (b'        """F."""\n', b""),
    (b"    x = ", b"\n\n    x = "),
])
def test_comments_docstrings_and_blank_lines_do_not_count(edit: tuple[bytes, bytes]) -> None:
    assert normalized("m.py", SOURCE.replace(*edit)) == normalized("m.py", SOURCE)


@pytest.mark.parametrize("edit", [
    (b'x = "# kept"', b'x = "# changed"'),  # a string that is no docstring
    (b'f"{self.x}#"', b'f"{self.x}!"'),
    (b"return", b"yield"),
    (b"import os", b"import sys"),
])
def test_a_changed_statement_counts(edit: tuple[bytes, bytes]) -> None:
    assert normalized("m.py", SOURCE.replace(*edit)) != normalized("m.py", SOURCE)


def test_a_file_that_does_not_parse_is_read_as_its_bytes() -> None:
    broken = b"def f(:\n    # a comment\n"
    assert normalized("m.py", broken) == b"raw\0" + broken
    assert normalized("m.py", broken + b"# another\n") != normalized("m.py", broken)
    assert skeleton("m.py", SOURCE) != normalized("m.py", SOURCE)


def test_the_selected_test_files_are_a_folders_python_files_a_node_ids_file_and_the_conftests_above(
        tmp_path: Path) -> None:
    from harness.results.evidence import selected_test_files

    (tmp_path / "conftest.py").write_text("")  # above the project: never its file
    project = write_project(tmp_path / "p", {
        "conftest.py": "", "tests/conftest.py": "", "tests/unit/conftest.py": "", "tests/unit/test_a.py": "",
        "tests/unit/data.txt": "", "tests/unit/__pycache__/test_a.py": "", "tests/unit/UPPER.PY": "",
        "tests/test_b.py": "", "tests/test_c.py": "", "other/conftest.py": ""})
    assert selected_test_files(project, ["tests/unit", "tests/test_b.py::test_x::param[a b]", "tests/none"]) == [
        "conftest.py", "tests/conftest.py", "tests/test_b.py", "tests/unit/conftest.py", "tests/unit/test_a.py"]
