"""A JUnit testcase with no name (pytest writes ``<testcase time="0.000" />`` when a test closed every
file descriptor) is no case: the run gets one session-level error naming what broke, never an invented
passed case with an empty node id (issue 11)."""

from __future__ import annotations

import json
from pathlib import Path

from reports.junit_in import SideFile, read_cases

SUITE = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="2">'
         '<testcase classname="tests.test_add" name="test_add" time="0.01" />{extra}</testsuite></testsuites>')


def _side(tmp_path: Path, **data: object) -> SideFile:
    path = tmp_path / "counts.json"
    path.write_text(json.dumps({"cases": {
        "tests/test_add.py::test_add": {"classname": "tests.test_add", "name": "test_add", "kind": "passed"},
        "tests/test_fault.py::test_fault": {"classname": "tests.test_fault", "name": "test_fault", "kind": None}},
        **data}))
    return SideFile.read(path)


def test_a_nameless_testcase_is_a_session_error_naming_the_case_left_without_a_result(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(SUITE.format(extra='<testcase time="0.000" />'))
    cases = read_cases(junit, _side(tmp_path, exitstatus=3))
    assert [(c.nodeid, c.kind) for c in cases] == [("", "error"), ("tests/test_add.py::test_add", "passed")]
    assert cases[0].message.startswith("pytest's JUnit report holds 1 testcase(s) with no name and pytest ended "
                                       "with an internal error (exit 3)")
    assert "no result for tests/test_fault.py::test_fault" in cases[0].message


def test_a_nameless_collection_error_the_plugin_recorded_keeps_its_own_message(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(SUITE.format(extra='<testcase classname="" name="" time="0.000">'
                                        '<error message="collection failure">E   ImportError: x</error></testcase>'))
    cases = read_cases(junit, _side(tmp_path, collect_errors=[{"nodeid": "", "classname": "", "name": ""}]))
    assert [(c.nodeid, c.kind, c.message) for c in cases] == [
        ("tests/test_add.py::test_add", "passed", ""), ("", "error", "collection failure")]
