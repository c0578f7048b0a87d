"""The one mapping to an exit code: what a run judged, what a sweep found, and an error the user can act on.

Each becomes one ``ExitCode`` (``harness/exit_codes.py``, one meaning per member), as cargo-mutants maps
a lab's outcome to its exit code in one place. The gate run's priority: INTERRUPTED, BASELINE_RED,
GATE_FAILED (a FAIL is a definite finding), GATE_ERROR (ERROR, TIMEOUT, CRASH), OWED (only when
``--fail-on-owed`` asks; STALE counts as OWED), NOTHING_JUDGED, OK. A sweep: NOTHING_JUDGED when
mutmut generated no mutant, GATE_FAILED when ``--fail-on-survivor`` asks and one is unexplained, OK.
A baseline that is red stops either before a result exists (``BASELINE_RED``, said where it is caught).
"""

from __future__ import annotations

from harness.errors import SeamgateUsageError, refusal_of
from harness.exit_codes import ExitCode
from mutations.errors import MutationCatalogError, MutationRotError, MutationTargetError
from reports.atomic import OutputWriteError
from reports.mutants import SweepResult
from reports.outcome import Report, Verdict


def code_for_report(report: Report, *, fail_on_owed: bool) -> ExitCode:
    """The exit code of a ``seamgate run`` (or of a merged report of its shards).

    A run which judged nothing is never OK: judged means at least one arm got a verdict from something
    that ran (PASS, FAIL, ERROR, TIMEOUT, CRASH), here or in evidence of the same code; OWED and STALE
    arms judged nothing.
    """
    verdicts = set(report.verdicts())
    if report.interrupted:
        return ExitCode.INTERRUPTED
    if report.baseline_red:
        return ExitCode.BASELINE_RED
    if Verdict.FAIL in verdicts:
        return ExitCode.GATE_FAILED
    if verdicts & {Verdict.ERROR, Verdict.TIMEOUT, Verdict.CRASH}:
        return ExitCode.GATE_ERROR
    if fail_on_owed and verdicts & {Verdict.OWED, Verdict.STALE}:
        return ExitCode.OWED
    if not verdicts - {Verdict.OWED, Verdict.STALE}:
        return ExitCode.NOTHING_JUDGED
    return ExitCode.OK


def code_for_sweep(result: SweepResult, *, fail_on_survivor: bool) -> ExitCode:
    """OK, or GATE_FAILED when ``--fail-on-survivor`` and a mutant survived unexplained (or is owed)."""
    if not result.mutants:
        return ExitCode.NOTHING_JUDGED
    if fail_on_survivor and result.of_status("survived", "no_coverage", "owed"):
        return ExitCode.GATE_FAILED
    return ExitCode.OK


def code_for_error(error: BaseException) -> ExitCode | None:
    """The exit code for an error the user can act on, or ``None`` for a bug in seamgate.

    Errors of the mutation engine carry no code (``mutations`` may not import ``harness``): a catalog or
    target error is the user's to fix, a mutation that rotted is an error of the gate that uses it.
    """
    if isinstance(error, SeamgateUsageError):
        return error.exit_code
    if isinstance(error, OutputWriteError):
        return ExitCode.ENVIRONMENT
    if refusal_of(error) is not None:
        return ExitCode.ENVIRONMENT
    if isinstance(error, (MutationCatalogError, MutationTargetError)):
        return ExitCode.USAGE_ERROR
    if isinstance(error, MutationRotError):
        return ExitCode.GATE_ERROR
    return None
