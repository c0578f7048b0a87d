"""The counting plugin: per-case assertion counts and outcomes, written as a JSON side-file.

Loaded into every run with ``-p harness.rows.pytest_counting --seamgate-counts FILE``. JUnit XML stays
the record of which cases ran and how they ended; this file adds what JUnit cannot say:

- assertions per case: one failed assertion for a case whose call raised ``AssertionError`` (pytest
  stops a case at its first failed assertion), always; passed ones from ``pytest_assertion_pass``
  only when pytest's ``enable_assertion_pass_hook`` is on (a gate's ``count_assertions: true``),
  else ``null``: "not counted", never 0. The hook is opt-in because it changes what tests see;
- under pytest-xdist (``-n``) the same facts, carried from the workers on the reports;
- xfail vs xpass (JUnit writes a non-strict xpass as a plain pass);
- a failure caused by ``ImportError``/``SyntaxError`` inside a test body, which is a broken source,
  not a red;
- the JUnit ``classname``/``name`` pytest derives from each node id, so the reader maps JUnit
  testcases back to node ids exactly;
- the session's own duration (the fork-server benchmark subtracts it to get the overhead);
- ``foreign_imports``: every loaded module of the project (a top-level name of the tree's import
  roots, ``harness/rows/import_roots.py``) whose file lies OUTSIDE the tree, so the executor can make the
  run an ERROR when the copy's code is not what ran (an editable install's ``.pth`` came first).

The file is written at session finish; a run killed before that has no side-file, and the reader
treats that as "no counts" (the run is a TIMEOUT or CRASH anyway).

PYTEST_DONT_REWRITE: pytest would rewrite this plugin's asserts (it has none) afresh in every run's
process, which writes no bytecode; and rewriting is what warns when a module is already imported.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .import_roots import NAMES_ENV, ROOTS_ENV, foreign_imports

#: Exceptions that mean the code under test could not even be imported: an ERROR, never a red.
_BROKEN_SOURCE = (ImportError, SyntaxError)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--seamgate-counts", default=None, help="seamgate: write per-case counts (JSON) here")


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--seamgate-counts")
    if path:
        config.pluginmanager.register(_Counter(path, config), "seamgate-counter")


def counting_on(config: pytest.Config) -> bool:
    """Whether passing assertions are counted: pytest's own ``enable_assertion_pass_hook`` setting."""
    try:
        return bool(config.getini("enable_assertion_pass_hook"))
    except ValueError:  # pragma: no cover - a pytest without the setting
        return False


def junit_key(nodeid: str) -> tuple[str, str]:
    """The (classname, name) pytest's junitxml writes for ``nodeid``."""
    try:
        from _pytest.junitxml import mangle_test_address
    except ImportError:  # pragma: no cover - pytest moved it; the fallback mirrors pytest 8/9
        mangle_test_address = _mangle
    names = mangle_test_address(nodeid)
    return ".".join(names[:-1]), names[-1]


def _mangle(address: str) -> list[str]:
    path, bracket, params = address.partition("[")
    names = path.split("::")
    names[0] = names[0].replace("/", ".").removesuffix(".py")
    names[-1] += bracket + params
    return names


class _Counter:
    """Collects per-case facts during one session and writes them at its end.

    The facts of a case travel ON its reports (``report.seamgate_facts``, set where the case runs):
    under pytest-xdist the controller, which writes the file, never runs a test, and the workers'
    reports are serialized to it with their attributes. A worker writes no file; the project modules
    it loaded from outside the tree come back in ``workeroutput``.
    """

    def __init__(self, path: str, config: pytest.Config) -> None:
        self.path = path
        self.config = config
        self.counting = counting_on(config)
        self.worker = hasattr(config, "workerinput")
        #: Passing assertions per node id, in the process that runs the case.
        self.passed: dict[str, int] = {}
        self.cases: dict[str, dict[str, Any]] = {}
        self.collect_errors: list[dict[str, str]] = []
        self.worker_foreign: list[dict[str, str]] = []
        self.started = time.perf_counter()

    def case(self, nodeid: str) -> dict[str, Any]:
        if nodeid not in self.cases:
            classname, name = junit_key(nodeid)
            self.cases[nodeid] = {
                "classname": classname, "name": name, "kind": None, "message": "",
                "assertions_passed": None, "assertions_failed": 0, "exception": "",
            }
        return self.cases[nodeid]

    def pytest_sessionstart(self) -> None:
        self.started = time.perf_counter()

    def pytest_assertion_pass(self, item: pytest.Item) -> None:
        self.passed[item.nodeid] = self.passed.get(item.nodeid, 0) + 1

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]):
        report = yield
        facts: dict[str, Any] = {"passed": self.passed.get(item.nodeid, 0) if self.counting else None}
        if call.excinfo is not None and call.when == "call":
            facts["exception"] = call.excinfo.typename
            facts["failed"] = 1 if call.excinfo.errisinstance(AssertionError) else 0
            facts["broken_source"] = bool(call.excinfo.errisinstance(_BROKEN_SOURCE))
        report.seamgate_facts = facts
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = self.case(report.nodeid)
        facts = getattr(report, "seamgate_facts", None)
        if isinstance(facts, dict):
            # Cumulative over the phases: the teardown's figure is the case's total.
            entry["assertions_passed"] = facts.get("passed")
            if "exception" in facts:
                entry["exception"] = facts["exception"]
                entry["assertions_failed"] += int(facts.get("failed", 0))
                if facts.get("broken_source"):
                    entry["broken_source"] = True
        kind, message = _classify(report, entry)
        if kind is not None and _outranks(kind, entry["kind"]):
            entry["kind"], entry["message"] = kind, message

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            classname, name = junit_key(report.nodeid or ".")
            self.collect_errors.append({
                "nodeid": report.nodeid, "classname": classname, "name": name,
                "message": str(report.longrepr)[-2000:],
            })

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """pytest-xdist: a worker finished; keep the foreign imports it reported."""
        output = getattr(node, "workeroutput", None) or {}
        self.worker_foreign.extend(output.get("seamgate_foreign_imports") or [])

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.worker:
            self.config.workeroutput["seamgate_foreign_imports"] = _foreign_imports()  # type: ignore[attr-defined]
            return
        distributed = self.config.pluginmanager.has_plugin("dsession")
        foreign = _foreign_imports()
        foreign += [f for f in self.worker_foreign if f not in foreign]
        payload = {
            "session_seconds": time.perf_counter() - self.started,
            "exitstatus": int(exitstatus),
            "assertions_counted": self.counting,
            "distributed": distributed,
            "cases": self.cases,
            "collect_errors": self.collect_errors,
            "foreign_imports": foreign,
        }
        tmp = f"{self.path}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(payload, fh)
        os.replace(tmp, self.path)


def _foreign_imports() -> list[dict[str, str]]:
    """Project modules loaded from outside the tree (empty when the executor named no roots)."""
    roots = [r for r in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if r]
    names = {n for n in os.environ.get(NAMES_ENV, "").split(",") if n}
    if not roots or not names:
        return []
    return foreign_imports(dict(sys.modules), Path(roots[0]), names)


#: Later phases may only overwrite an outcome with a worse one (a teardown error beats a pass).
_RANK = {None: 0, "passed": 1, "skipped": 2, "owed": 2, "xfailed": 2, "xpassed": 2, "failed": 3, "error": 4}


def _outranks(new: str, old: str | None) -> bool:
    return _RANK[new] >= _RANK[old]


def _classify(report: pytest.TestReport, entry: dict[str, Any]) -> tuple[str | None, str]:
    """The case kind one phase's report implies, or ``None`` when the phase says nothing new."""
    message = _message(report)
    if report.when != "call":
        if report.failed:
            return "error", f"failed on {report.when}: {message}"
        if report.skipped:
            return ("owed" if message.startswith("OWED:") else "skipped"), message
        return None, ""
    if hasattr(report, "wasxfail"):
        return ("xfailed", report.wasxfail) if report.skipped else ("xpassed", report.wasxfail)
    if report.failed:
        return ("error" if entry.get("broken_source") else "failed"), message
    if report.skipped:
        return ("owed" if message.startswith("OWED:") else "skipped"), message
    return "passed", ""


def _message(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):  # a skip: (path, lineno, "Skipped: reason")
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message
    return str(longrepr or "")[-500:]
