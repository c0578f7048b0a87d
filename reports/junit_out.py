"""JUnit XML report: one testcase per gate and arm, and one per mutant of a sweep.

A FAIL is a failure and an ERROR/TIMEOUT/CRASH an error (its ``type`` is the verdict), each with the
verdict's message as ``message`` and the detail (message, runs, red cases, logs) as the body; an
OWED or STALE arm is skipped with its reason, so CI shows it as not measured rather than green.
A sweep's survivors (``survived``, ``no_coverage``) are failures with their diff; equivalent and
owed mutants are skipped with their reason; detected mutants pass and list their killers. Each
mutant's status is kept as a ``status`` property, so the file reads back to the same statuses.

XML 1.0 cannot carry most control characters, not even as character references; pytest output
holds them (ANSI colours), so every text is passed through ``xml_safe`` first, as pytest's own
JUnit writer does (``\\x1b`` becomes ``#x1B``).
"""

from __future__ import annotations

import re
from pathlib import Path

from junitparser import Error, Failure, JUnitXml, Properties, Property, Skipped, TestCase, TestSuite

from reports.atomic import write_atomic
from reports.mutants import DETECTED, MutantOutcome, SweepResult
from reports.outcome import ArmOutcome, Report, RunOutcome, Verdict, counted

DECLARATION = '<?xml version="1.0" encoding="utf-8"?>\n'
#: Characters XML 1.0 does not allow anywhere (tab, newline and carriage return are allowed).
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
#: Skipped results carry the verdict (or mutant status) as their ``type``.
_SKIP_VERDICTS = (Verdict.OWED, Verdict.STALE)
_ERROR_VERDICTS = (Verdict.ERROR, Verdict.TIMEOUT, Verdict.CRASH)


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 forbids written as ``#xNN`` (pytest's convention)."""
    return _ILLEGAL.sub(lambda m: f"#x{ord(m.group()):02X}", text)


def detail(outcome: ArmOutcome) -> str:
    """The failure body: the verdict's message, then each run's summary, red cases and log."""
    lines = [outcome.message, ""]
    for run in outcome.runs:
        lines.append(_run_line(run))
    return xml_safe("\n".join(lines).rstrip() + "\n")


def _run_line(run: RunOutcome) -> str:
    red = [c.nodeid for c in run.cases if c.kind in ("failed", "error")]
    text = f"{run.label}: {run.summary()}"
    if run.detail:
        text += f" ({run.detail})"
    if red:
        text += "\n  red: " + ", ".join(red)
    if run.log:
        text += f"\n  log: {run.log}"
    return text


def testcase(outcome: ArmOutcome) -> TestCase:
    case = TestCase(name=xml_safe(f"{outcome.gate}[{outcome.arm}]"), classname=f"seamgate.{outcome.kind or 'gate'}",
                    time=round(sum(r.wall for r in outcome.runs), 3))
    message = xml_safe(outcome.message)
    verdict = outcome.verdict
    if verdict is Verdict.FAIL:
        result = Failure(message, "FAIL")
    elif verdict in _ERROR_VERDICTS:
        result = Error(message, verdict.value)
    elif verdict in _SKIP_VERDICTS:
        result = Skipped(message, verdict.value)
    else:
        result = None
    if result is not None:
        if verdict is not Verdict.OWED:
            result.text = detail(outcome)
        case.result = [result]
    case.system_out = message
    return case


def mutant_case(mutant: MutantOutcome) -> TestCase:
    """One mutant: survivors fail with their diff, equivalent and owed ones are skipped, detected ones pass."""
    case = TestCase(name=xml_safe(mutant.id), classname=xml_safe(f"seamgate.sweep.{mutant.file}"),
                    time=round(mutant.wall, 3))
    where = f"{mutant.file}:{mutant.line}"
    if mutant.status in ("survived", "no_coverage"):
        why = "no case reaches it" if mutant.status == "no_coverage" else f"{counted(len(mutant.covered_by), 'case')} ran, none failed"
        failure = Failure(xml_safe(f"{mutant.status}: {where} {mutant.mutator}: {why}"), mutant.status)
        failure.text = xml_safe(mutant.diff)
        case.result = [failure]
    elif mutant.status in ("equivalent", "owed"):
        case.result = [Skipped(xml_safe(f"{mutant.status}: {mutant.reason or 'no reason given'}"), mutant.status)]
    elif mutant.status in DETECTED:
        case.system_out = xml_safe(f"{mutant.status} at {where} by " + (", ".join(mutant.killers) or mutant.reason))
    properties = Properties()
    properties.add_property(Property("status", mutant.status))
    case.append(properties)
    return case


def report_to_junit(report: Report, sweep: SweepResult | None = None) -> JUnitXml:
    xml = JUnitXml()
    if report.outcomes or report.baseline_red or sweep is None:
        suite = TestSuite("seamgate")
        for outcome in report.outcomes:
            suite.add_testcase(testcase(outcome))
        for run in report.baseline_red:
            case = TestCase(name=xml_safe(f"baseline {run.label}"), classname="seamgate.baseline", time=round(run.wall, 3))
            red = ", ".join(c.nodeid for c in run.cases if c.kind in ("failed", "error"))
            error = Error(xml_safe(f"baseline red: {red}"), "BaselineRed")
            error.text = xml_safe(_run_line(run) + "\n")
            case.result = [error]
            suite.add_testcase(case)
        suite.update_statistics()
        xml.add_testsuite(suite)
    if sweep is not None:
        mutants = TestSuite("seamgate.sweep")
        for mutant in sweep.mutants:
            mutants.add_testcase(mutant_case(mutant))
        mutants.update_statistics()
        xml.add_testsuite(mutants)
    xml.update_statistics()
    return xml


def junit_text(report: Report, sweep: SweepResult | None = None) -> str:
    """The whole document, XML declaration first."""
    return DECLARATION + empty_tags_spaced(report_to_junit(report, sweep).tostring().decode("utf-8")) + "\n"


def empty_tags_spaced(xml: str) -> str:
    """``<x a="1"/>`` written ``<x a="1" />``, whichever serializer junitparser picked.

    junitparser serializes with lxml when it is installed (the GPU machine has it) and with the
    standard library otherwise; they differ only there. ``/>`` never occurs in escaped content.
    """
    return re.sub(r"(?<! )/>", " />", xml)


def write_junit(path: Path, report: Report, sweep: SweepResult | None = None) -> None:
    write_atomic(path, junit_text(report, sweep))
