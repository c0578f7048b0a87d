"""The one mapping to an exit code (``harness/exit_mapping.py``): a gate run's report, a sweep's result and a user's
error each map to exactly one ``ExitCode``, by the priority README's table states."""

from __future__ import annotations

import errno
from dataclasses import dataclass

import pytest

from harness.errors import CommandLineError, ConfigError, EnvironmentProblem, GateFileError
from harness.exit_codes import ExitCode
from harness.exit_mapping import code_for_error, code_for_report, code_for_sweep
from mutations.errors import MutationCatalogError, MutationRotError, MutationTargetError
from reports.atomic import OutputWriteError
from reports.mutants import MutantOutcome, SweepResult
from reports.outcome import ArmOutcome, CaseOutcome, Report, RunOutcome, Verdict


# ---- a gate run's report -----------------------------------------------------------------

def report(*verdicts: Verdict, baseline_red: bool = False, interrupted: bool = False) -> Report:
    red = RunOutcome("baseline cpu-emulated", "completed", 1, (CaseOutcome("tests/x.py::test_a", "failed"),))
    return Report(outcomes=tuple(ArmOutcome("g", "cpu-emulated", v) for v in verdicts),
                  baseline_red=(red,) if baseline_red else (), interrupted=interrupted)


@dataclass(frozen=True)
class ExitRow:
    report: Report
    code: ExitCode
    fail_on_owed: bool = False


EXIT_ROWS: dict[str, ExitRow] = {
    # nothing judged is never green: no arm got a verdict from something that ran
    "empty": ExitRow(report(), ExitCode.NOTHING_JUDGED),
    "empty-asked": ExitRow(report(), ExitCode.NOTHING_JUDGED, True),
    "owed-only": ExitRow(report(Verdict.OWED), ExitCode.NOTHING_JUDGED),
    "stale-only": ExitRow(report(Verdict.STALE), ExitCode.NOTHING_JUDGED),
    "pass": ExitRow(report(Verdict.PASS), ExitCode.OK),
    "owed-beside-a-pass": ExitRow(report(Verdict.PASS, Verdict.OWED), ExitCode.OK),
    "stale-beside-a-pass": ExitRow(report(Verdict.PASS, Verdict.STALE), ExitCode.OK),
    "owed-asked": ExitRow(report(Verdict.PASS, Verdict.OWED), ExitCode.OWED, True),
    "stale-asked": ExitRow(report(Verdict.STALE), ExitCode.OWED, True),
    "pass-asked": ExitRow(report(Verdict.PASS), ExitCode.OK, True),
    "error": ExitRow(report(Verdict.PASS, Verdict.ERROR), ExitCode.GATE_ERROR),
    "timeout": ExitRow(report(Verdict.TIMEOUT), ExitCode.GATE_ERROR),
    "crash": ExitRow(report(Verdict.CRASH), ExitCode.GATE_ERROR),
    "error-beats-owed": ExitRow(report(Verdict.OWED, Verdict.ERROR), ExitCode.GATE_ERROR, True),
    "fail": ExitRow(report(Verdict.FAIL), ExitCode.GATE_FAILED),
    "fail-beats-error": ExitRow(report(Verdict.ERROR, Verdict.FAIL, Verdict.CRASH), ExitCode.GATE_FAILED),
    "fail-beats-owed": ExitRow(report(Verdict.OWED, Verdict.FAIL), ExitCode.GATE_FAILED, True),
    "baseline-red": ExitRow(report(baseline_red=True), ExitCode.BASELINE_RED),
    "baseline-red-beats-fail": ExitRow(report(Verdict.FAIL, baseline_red=True), ExitCode.BASELINE_RED),
    "interrupted-beats-all": ExitRow(report(Verdict.FAIL, baseline_red=True, interrupted=True), ExitCode.INTERRUPTED),
    "interrupted-with-passes": ExitRow(report(Verdict.PASS, interrupted=True), ExitCode.INTERRUPTED),
    "interrupted-before-anything": ExitRow(report(interrupted=True), ExitCode.INTERRUPTED),
}


@pytest.mark.parametrize("name", list(EXIT_ROWS))
def test_each_report_maps_to_one_exit_code(name: str) -> None:
    row = EXIT_ROWS[name]
    assert code_for_report(row.report, fail_on_owed=row.fail_on_owed) is row.code


# ---- a sweep's result --------------------------------------------------------------------

def swept(*statuses: str) -> SweepResult:
    return SweepResult(scope=("calc",), mutants=tuple(MutantOutcome(id=f"m{n}", file="calc/ops.py", line=1,
                                                                    status=s)  # type: ignore[arg-type]
                                                      for n, s in enumerate(statuses)))


@pytest.mark.parametrize("statuses, fail_on_survivor, code", [
    ((), False, ExitCode.NOTHING_JUDGED),
    ((), True, ExitCode.NOTHING_JUDGED),
    (("killed", "survived", "no_coverage", "owed"), False, ExitCode.OK),
    (("killed", "equivalent", "timeout", "error"), True, ExitCode.OK),
    (("killed", "survived"), True, ExitCode.GATE_FAILED),
    (("killed", "no_coverage"), True, ExitCode.GATE_FAILED),
    (("killed", "owed"), True, ExitCode.GATE_FAILED),
])
def test_a_sweep_fails_only_when_asked_and_a_mutant_is_unexplained_and_one_that_generated_none_judged_nothing(
        statuses: tuple[str, ...], fail_on_survivor: bool, code: ExitCode) -> None:
    assert code_for_sweep(swept(*statuses), fail_on_survivor=fail_on_survivor) is code


# ---- an error ----------------------------------------------------------------------------

def caused(error: BaseException, cause: BaseException) -> BaseException:
    error.__cause__ = cause
    return error


@pytest.mark.parametrize("error, code", [
    (CommandLineError("--shard 3/2"), ExitCode.USAGE_ERROR),
    (ConfigError("pyproject.toml:3: bad"), ExitCode.USAGE_ERROR),
    (GateFileError(["gates/g.yaml:1:1: bad"]), ExitCode.USAGE_ERROR),
    (EnvironmentProblem("the fork server could not start"), ExitCode.ENVIRONMENT),
    (OutputWriteError("--json r.json: cannot write"), ExitCode.ENVIRONMENT),
    (OSError(errno.ENOSPC, "No space left on device"), ExitCode.ENVIRONMENT),
    (OSError(errno.EROFS, "Read-only file system"), ExitCode.ENVIRONMENT),
    (caused(RuntimeError("cannot copy the working tree"), OSError(errno.EDQUOT, "Disk quota exceeded")),
     ExitCode.ENVIRONMENT),
    (MutationCatalogError(["mutations/catalog.yaml:2:3: bad"]), ExitCode.USAGE_ERROR),
    (MutationTargetError("../x.py is outside the project"), ExitCode.USAGE_ERROR),
    (MutationRotError("m1", "anchor gone"), ExitCode.GATE_ERROR),
])
def test_an_error_the_user_can_act_on_maps_to_its_code(error: BaseException, code: ExitCode) -> None:
    assert code_for_error(error) is code


@pytest.mark.parametrize("error", [ValueError("a bug"), OSError(errno.ENOENT, "No such file"), KeyError("x")])
def test_any_other_error_is_a_bug_in_seamgate_and_maps_to_none(error: BaseException) -> None:
    assert code_for_error(error) is None
