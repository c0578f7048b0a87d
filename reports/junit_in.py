"""JUnit ingestion: pytest's JUnit XML (read with junitparser) joined with the counting side-file.

JUnit is the record of which cases ran and how they ended. The side-file written by
``harness.rows.pytest_counting`` maps each JUnit ``(classname, name)`` back to its exact node id and adds
assertion counts, xfail/xpass and "failed because the source would not import". A JUnit file with
no suite, or a collection-error testcase, is how pytest reports a module that would not import.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase

from reports.outcome import OWED_PREFIX, CaseKind, CaseOutcome


@dataclass(frozen=True)
class SideFile:
    """What the counting plugin wrote (empty when the run died before session finish)."""

    #: node id -> the plugin's facts about it.
    cases: Mapping[str, Mapping[str, Any]]
    #: (classname, name) -> node id, for JUnit testcases (including collection errors).
    keys: Mapping[tuple[str, str], str]
    session_seconds: float = 0.0
    exitstatus: int | None = None

    @classmethod
    def read(cls, path: Path) -> SideFile:
        if not path.is_file():
            return cls(cases={}, keys={})
        data = json.loads(path.read_text(encoding="utf-8"))
        cases = data.get("cases", {})
        keys = {(c["classname"], c["name"]): nodeid for nodeid, c in cases.items()}
        for err in data.get("collect_errors", []):
            keys[(err.get("classname", ""), err.get("name", ""))] = err["nodeid"]
        return cls(cases=cases, keys=keys, session_seconds=float(data.get("session_seconds", 0.0)),
                   exitstatus=data.get("exitstatus"))


def read_cases(junit: Path, side: SideFile) -> tuple[CaseOutcome, ...] | None:
    """Every testcase of ``junit`` as a ``CaseOutcome``; ``None`` when there is no report or suite."""
    if not junit.is_file() or junit.stat().st_size == 0:
        return None
    xml = JUnitXml.fromfile(str(junit))
    suites = list(xml) if isinstance(xml, JUnitXml) else [xml]
    if not suites:
        return None
    testcases = [tc for suite in suites for tc in suite]
    # A nameless testcase is a case only when the counting plugin recorded it: a collection error at
    # the session's root (node id ``""``); any other is no case at all (``_broken_report``).
    known = ("", "") in side.keys
    named = [tc for tc in testcases if tc.classname or tc.name or (known and _junit_kind(tc)[0] == "error")]
    cases = tuple(_case(tc, side) for tc in named)
    if len(named) == len(testcases):
        return cases
    return (_broken_report(len(testcases) - len(named), cases, side), *cases)


def _broken_report(nameless: int, cases: tuple[CaseOutcome, ...], side: SideFile) -> CaseOutcome:
    """A session-level error (node id ``""``, "the session") for a JUnit report with nameless testcases.

    pytest writes ``<testcase time="0.000" />`` when the session's own machinery broke mid-run
    (a test that closes every file descriptor); read as a case it would be an invented PASS with an
    empty node id. It is no case: the run is an ERROR, and the cases left without a result are named.
    """
    seen = {c.nodeid for c in cases}
    silent = sorted(n for n, facts in side.cases.items() if n not in seen and not facts.get("kind"))
    internal = " and pytest ended with an internal error (exit 3)" if side.exitstatus == 3 else ""
    return CaseOutcome(
        nodeid="", kind="error",
        message=(f"pytest's JUnit report holds {nameless} testcase(s) with no name{internal}: the session's own files "
                 "broke under it (did a test close or replace pytest's file descriptors?); "
                 + (f"no result for {', '.join(silent[:5])}" + (f" (and {len(silent) - 5} more)" if len(silent) > 5 else "")
                    if silent else "every named case is kept as reported")
                 + "; no case was invented for the nameless entry"))


def _case(tc: TestCase, side: SideFile) -> CaseOutcome:
    key = (tc.classname or "", tc.name or "")
    nodeid = side.keys.get(key) or _guess_nodeid(*key)
    facts = side.cases.get(nodeid, {})
    kind, message = _junit_kind(tc)
    kind = _refine(kind, facts)
    return CaseOutcome(
        nodeid=nodeid, kind=kind, message=message or str(facts.get("message", "")),
        assertions_passed=None if facts.get("assertions_passed") is None else int(facts["assertions_passed"]),
        assertions_failed=int(facts.get("assertions_failed", 0)),
        duration=float(tc.time or 0.0),
    )


def _junit_kind(tc: TestCase) -> tuple[CaseKind, str]:
    results = tc.result
    for cls, kind in ((Error, "error"), (Failure, "failed")):
        found = [r for r in results if isinstance(r, cls)]
        if found:
            return kind, found[0].message or ""
    skipped = [r for r in results if isinstance(r, Skipped)]
    if skipped:
        message = skipped[0].message or ""
        if skipped[0].type == "pytest.xfail":
            return "xfailed", message
        return ("owed" if message.startswith(OWED_PREFIX) else "skipped"), message
    return "passed", ""


def _refine(kind: CaseKind, facts: Mapping[str, Any]) -> CaseKind:
    """Use what JUnit cannot say: an xpass written as a pass, a red that was really an ImportError."""
    plugin_kind = facts.get("kind")
    if kind == "passed" and plugin_kind == "xpassed":
        return "xpassed"
    if kind == "failed" and plugin_kind == "error":
        return "error"
    return kind


def _guess_nodeid(classname: str, name: str) -> str:
    """Best effort when the side-file is missing: ``a.b.test_x`` + ``test_y`` -> ``a/b/test_x.py::test_y``."""
    if not classname:
        return name
    return classname.replace(".", "/") + ".py::" + name
