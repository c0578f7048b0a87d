"""JUnit XML report: one testcase per gate and arm.

A FAIL is a failure and an ERROR/TIMEOUT/CRASH an error, each with the evaluation message; an OWED
or STALE arm is skipped with its reason, so CI shows it as not measured rather than green.
"""

from __future__ import annotations

from pathlib import Path

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from reports.json_out import write_atomic
from reports.outcome import ArmOutcome, Report, Verdict


def testcase(outcome: ArmOutcome) -> TestCase:
    case = TestCase(name=f"{outcome.gate}[{outcome.arm}]", classname=f"seamgate.{outcome.kind or 'gate'}",
                    time=sum(r.wall for r in outcome.runs))
    verdict = outcome.verdict
    if verdict is Verdict.FAIL:
        case.result = [Failure(outcome.message, "GateFailed")]
    elif verdict in (Verdict.ERROR, Verdict.TIMEOUT, Verdict.CRASH):
        case.result = [Error(outcome.message, verdict.value)]
    elif verdict in (Verdict.OWED, Verdict.STALE):
        case.result = [Skipped(outcome.message, verdict.value)]
    case.system_out = outcome.message
    return case


def report_to_junit(report: Report) -> JUnitXml:
    suite = TestSuite("seamgate")
    for outcome in report.outcomes:
        suite.add_testcase(testcase(outcome))
    for run in report.baseline_red:
        case = TestCase(name=f"baseline {run.label}", classname="seamgate.baseline", time=run.wall)
        red = ", ".join(c.nodeid for c in run.cases if c.kind in ("failed", "error"))
        case.result = [Error(f"baseline red: {red}", "BaselineRed")]
        suite.add_testcase(case)
    suite.update_statistics()
    xml = JUnitXml()
    xml.add_testsuite(suite)
    return xml


def write_junit(path: Path, report: Report) -> None:
    write_atomic(path, report_to_junit(report).tostring().decode("utf-8"))
