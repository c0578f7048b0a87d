"""reports.mte_out on its own: locations the schema accepts, replacements viewers can splice, and the small facts.

Written after a sweep of reports/mte_out.py against the format tests left 41 of 242 mutants alive:
the recorded sweep only has well-formed one-line mutants of a ``.py`` file. With this file: 231 of 242,
then the cases for an insertion, a deletion, a class's test id and an unnamed generator; the rest are
equivalent (a source read as ``UTF-8``/the UTF-8 default, or read from a folder that fails anyway).
Command: ``seamgate sweep reports/mte_out.py --tests tests/reports/test_mte.py --tests
tests/reports/test_report_formats.py --output /tmp/sw``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reports.mte_out import location, mutant_to_mte, replacement, source_reader, sweep_to_mte
from reports.mutants import MutantOutcome, SweepResult

ONE_LINE = "--- a/m.py\n+++ b/m.py\n@@ -2,1 +2,1 @@\n-    return a + b\n+    return a - b\n"


def mutant(**fields) -> MutantOutcome:
    values = {"id": "m.x_f__mutmut_1", "file": "m.py", "line": 2, "column": 12, "end_line": 2, "end_column": 17,
              "mutator": "operator", "diff": ONE_LINE, "status": "killed"}
    values.update(fields)
    return MutantOutcome(**values)


@pytest.mark.parametrize("fields, start, end", [
    ({}, (2, 12), (2, 17)),
    ({"line": 0, "column": 0, "end_line": 0, "end_column": 0}, (1, 1), (1, 2)),  # unknown: the first character
    ({"end_line": 0, "end_column": 0}, (2, 12), (2, 13)),  # no end: one character
    ({"end_line": 1}, (2, 12), (2, 17)),  # an end before the start is moved to the start's line
    ({"end_column": 5}, (2, 12), (2, 13)),  # an end column before the start on one line: one character
    ({"end_line": 4, "end_column": 3}, (2, 12), (4, 3)),  # several lines keep their end column
    ({"end_line": 4, "end_column": 0}, (2, 12), (4, 13)),
    ({"end_line": 4, "end_column": 1}, (2, 12), (4, 1)),
])
def test_a_location_is_one_based_and_ends_after_it_starts(fields, start, end):
    got = location(mutant(**fields))
    assert (got["start"]["line"], got["start"]["column"]) == start
    assert (got["end"]["line"], got["end"]["column"]) == end


def test_a_one_line_change_replaces_exactly_the_locations_text():
    assert replacement(mutant()) == "a - b"
    assert replacement(mutant(column=14, end_column=15)) == "-"  # only the located operator
    assert replacement(mutant(column=1, end_column=17)) == "    return a - b"  # from the first column


def test_a_location_without_an_end_line_is_on_its_start_line():
    assert replacement(mutant(end_line=0)) == "a - b"


def test_an_empty_location_is_an_insertion_and_a_vanished_text_a_deletion():
    inserted = "@@ -2,1 +2,1 @@\n-    f(a)\n+    f(a, b)\n"
    assert replacement(mutant(diff=inserted, column=8, end_column=8)) == ", b"
    removed = "@@ -2,1 +2,1 @@\n-x = [a, b]\n+x = [a]\n"
    assert replacement(mutant(diff=removed, column=7, end_column=10)) == ""


def test_a_change_the_location_does_not_fit_falls_back_to_the_added_lines():
    assert replacement(mutant(column=3, end_column=5)) == "return a - b"  # prefix "  " kept, suffix differs
    assert replacement(mutant(end_line=3)) == "return a - b"  # the location spans lines
    assert replacement(mutant(column=17, end_column=17)) == "return a - b"  # an empty location
    two = "@@ -2,2 +2,2 @@\n-    x = 1\n-    y = 2\n+    x = 2\n+    y = 3\n"
    assert replacement(mutant(diff=two)) == "x = 2\ny = 3"
    shrunk = "@@ -2,1 +2,1 @@\n-aXa\n+a\n"  # shorter than what the location leaves alone on either side
    assert replacement(mutant(diff=shrunk, column=2, end_column=3)) == "a"


def test_a_deletion_has_no_replacement():
    assert replacement(mutant(diff="@@ -2,1 +2,0 @@\n-    return a + b\n")) is None
    assert "replacement" not in mutant_to_mte(mutant(diff="@@ -2,1 +2,0 @@\n-    return a + b\n"))


def test_a_mutant_without_a_mutator_name_is_unknown_and_its_duration_is_in_milliseconds():
    data = mutant_to_mte(mutant(mutator="", wall=0.12345))
    assert data["mutatorName"] == "unknown" and data["duration"] == 123.5
    assert "duration" not in mutant_to_mte(mutant(wall=0.0))


def test_each_file_gets_its_language_and_source_and_unknown_sources_are_empty(tmp_path: Path):
    (tmp_path / "m.py").write_text("x = 1\n")
    sweep = SweepResult(scope=("m.py",), mutants=(
        mutant(), mutant(id="s", file="stubs/m.pyi"), mutant(id="c", file="ext/fast.pyx"), mutant(id="n", file="Makefile")))
    files = sweep_to_mte(sweep, source_reader(tmp_path))["files"]
    assert {path: f["language"] for path, f in files.items()} == {
        "m.py": "python", "stubs/m.pyi": "python", "ext/fast.pyx": "pyx", "Makefile": "text"}
    assert files["m.py"]["source"] == "x = 1\n" and files["stubs/m.pyi"]["source"] == ""


def test_a_source_that_cannot_be_read_as_text_is_empty(tmp_path: Path):
    (tmp_path / "bin.py").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "dir.py").mkdir()
    read = source_reader(tmp_path)
    assert read("bin.py") is None and read("dir.py") is None and read("absent.py") is None


def test_test_files_group_cases_by_file_and_name_them_by_the_rest_of_the_node_id():
    sweep = SweepResult(scope=("m.py",), mutants=(mutant(killers=("tests/t.py::TestA::test_b",),
                                                         covered_by=("tests/t.py::TestA::test_b", "tests/u.py::test_c")),))
    data = sweep_to_mte(sweep, lambda rel: None)
    assert data["testFiles"] == {"tests/t.py": {"tests": [{"id": "tests/t.py::TestA::test_b", "name": "TestA::test_b"}]},
                                 "tests/u.py": {"tests": [{"id": "tests/u.py::test_c", "name": "test_c"}]}}
    assert data["framework"] == {"name": "seamgate", "dependencies": {}}  # no generator recorded: none claimed
