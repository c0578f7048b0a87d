"""Evaluation: judge what a run observed against a gate's exact expectation (its exit code: ``harness/exit_mapping.py``).

The rules, after the seeds:

- A run that did not finish is TIMEOUT or CRASH; a run with an import, collection or setup error
  (or pytest exit 2-5) is an ERROR of the gate, never a red.
- Expected red sets are EXACT. ``files``: every case in those files red and none outside;
  ``nodeids``: exactly those; ``count``: exactly that many. One extra red case fails the gate as
  surely as a missing one, and the message names it ("extra red: tests/x.py::test_b").
- ``counts`` are exact over the red part: the cases the expectation names (``files``/``nodeids``),
  or the red cases (``count``). ``assertions`` is the failed assertions summed over the red cases.
- A case skipped with an ``OWED:`` reason was not measured: it is never green, and a gate that
  would otherwise pass with such cases in play is OWED.
"""

from __future__ import annotations

import dataclasses

from typing import Iterable, Sequence

from harness.gates.model import Counts, Expectation, Gate
from reports.outcome import ArmOutcome, CaseOutcome, RunOutcome, Verdict, count_phrase, counted

#: pytest exit codes that mean the session did not judge the selection.
_PYTEST_TROUBLE = {
    2: "pytest was interrupted (errors during collection)",
    3: "pytest hit an internal error",
    4: "pytest refused its command line (usage error)",
    5: "pytest collected no tests",
}


def trouble(run: RunOutcome, what: str) -> tuple[Verdict, str] | None:
    """The verdict when ``run`` cannot be judged at all (timeout, crash, error), else ``None``."""
    if run.end == "timeout":
        return Verdict.TIMEOUT, f"{what}: {run.detail}"
    if run.end == "crash":
        return Verdict.CRASH, f"{what}: crashed ({run.detail})"
    if run.errors:
        first = run.errors[0]
        more = f" (and {len(run.errors) - 1} more)" if len(run.errors) > 1 else ""
        return Verdict.ERROR, (f"{what} broke import/collection/setup: {first.nodeid or 'the session'}: "
                               f"{_one_line(first.message)}{more}; an error, not a red")
    if run.exit_code in _PYTEST_TROUBLE:
        return Verdict.ERROR, f"{what}: {_PYTEST_TROUBLE[run.exit_code]} (exit {run.exit_code}); see {run.log}"
    return None


def red_of_baseline(run: RunOutcome) -> tuple[CaseOutcome, ...]:
    """Cases that make a baseline red: failures and errors (an OWED skip is not red)."""
    return run.of_kind("failed", "error")


def expected_part(expect: Expectation, run: RunOutcome) -> set[str] | None:
    """The node ids the expectation names as red (``None`` for a bare count)."""
    red = expect.red
    if red.files is not None:
        files = {f.rstrip("/") for f in red.files}
        return {c.nodeid for c in run.cases if _in_files(c.file, files)}
    if red.nodeids is not None:
        return set(red.nodeids)
    return None


def _in_files(file: str, files: set[str]) -> bool:
    return file in files or any(file.startswith(f + "/") for f in files)


def red_set_problems(expect: Expectation, run: RunOutcome, *, green_hint: str = "") -> list[str]:
    """What differs between the red cases and the exact expected set; empty when they match."""
    red = {c.nodeid for c in run.red}
    owed = {c.nodeid for c in run.owed}
    expected = expected_part(expect, run)
    if expected is None:
        want = expect.red.count or 0
        return [] if len(red) == want else [f"expected exactly {want} red, got {len(red)}: {_names(red)}"]
    problems = []
    if expect.red.files is not None:
        ran = {c.file for c in run.cases}
        empty = [f for f in expect.red.files if not any(_in_files(r, {f.rstrip('/')}) for r in ran)]
        problems += [f"no case of {f} ran" for f in empty]
    extra = sorted(red - expected)
    seen = {c.nodeid for c in run.cases}
    not_run = sorted(expected - seen)
    green = sorted(expected - red - owed - set(not_run))
    if extra:
        problems.append(f"extra red{_many(extra)}: {listed(extra)}")
    if green:
        problems.append(f"expected red but green{green_hint}{_many(green)}: {listed(green)}")
    if not_run:
        problems.append(f"expected red but not run{_many(not_run)}: {listed(not_run)}")
    return problems


def count_problems(counts: Counts | None, expect: Expectation, run: RunOutcome) -> list[str]:
    """Exact counts over the red part; empty when they match or none were asked for."""
    if counts is None:
        return []
    part = _red_part(expect, run)
    observed = {
        "cases": len(part),
        "passed": sum(1 for c in part if c.kind == "passed"),
        "failed": sum(1 for c in part if c.kind == "failed"),
        "assertions": sum(c.assertions_failed for c in part if c.red),
    }
    return [f"{name}: expected {want}, got {observed[name]}"
            for name, want in (("cases", counts.cases), ("passed", counts.passed),
                               ("failed", counts.failed), ("assertions", counts.assertions))
            if want is not None and observed[name] != want]


def _red_part(expect: Expectation, run: RunOutcome) -> tuple[CaseOutcome, ...]:
    expected = expected_part(expect, run)
    if expected is None:
        return run.red
    return tuple(c for c in run.cases if c.nodeid in expected)


def judge_red(gate: Gate, arm: str, run: RunOutcome, *, what: str, green_hint: str = "") -> ArmOutcome:
    """Judge one run against the gate's red set and counts."""
    base = ArmOutcome(gate=gate.id, arm=arm, verdict=Verdict.PASS, kind=gate.kind, title=gate.title, runs=(run,))
    bad = trouble(run, what)
    if bad is not None:
        return base.with_verdict(*bad)
    expect = expect_for_arm(gate.expect, arm)
    problems = red_set_problems(expect, run, green_hint=green_hint)
    problems += count_problems(expect.counts, expect, run)
    if problems:
        return base.with_verdict(Verdict.FAIL, f"{what}: " + "; ".join(problems))
    owed = run.owed
    if owed:
        return base.with_verdict(Verdict.OWED, f"{len(owed)} case(s) not measured: {_one_line(owed[0].message)}")
    return base.with_verdict(Verdict.PASS, f"{what}: {describe_pass(expect, run)}")


def expect_for_arm(expect: Expectation, arm: str) -> Expectation:
    """Node ids may name the arm's parametrization as ``{arm}``: ``test_x[{arm}]`` -> ``test_x[cuda]``."""
    nodeids = expect.red.nodeids
    if not nodeids or not any("{arm}" in n for n in nodeids):
        return expect
    red = dataclasses.replace(expect.red, nodeids=tuple(n.replace("{arm}", arm) for n in nodeids))
    return dataclasses.replace(expect, red=red)


def describe_pass(expect: Expectation, run: RunOutcome) -> str:
    """"reds exactly tests/x.py (3 cases, 0 passed, 3 assertions, 3 failed); 29 of 30 cases still passing"."""
    red = run.red
    still = sum(1 for c in run.cases if c.kind == "passed")
    tail = f"{still} of {counted(len(run.cases), 'case')} passing"
    if not red:
        return f"all green ({count_phrase(run.cases)}), exit {run.exit_code}"
    names = ", ".join(expect.red.files or expect.red.nodeids or ()) or f"{len(red)} case(s)"
    return f"reds exactly {names} ({count_phrase(_red_part(expect, run))}), exit {run.exit_code}; {tail}"


def owed_outcome(gate: Gate, arm: str, reason: str) -> ArmOutcome:
    """An arm that cannot run here: OWED with the reason, never green."""
    return ArmOutcome(gate=gate.id, arm=arm, verdict=Verdict.OWED, kind=gate.kind, title=gate.title,
                      message=reason if reason.startswith("OWED") else f"OWED: {reason}")


def error_outcome(gate: Gate, arm: str, message: str) -> ArmOutcome:
    return ArmOutcome(gate=gate.id, arm=arm, verdict=Verdict.ERROR, kind=gate.kind, title=gate.title,
                      message=message)


#: A message names at most this many node ids; the rest are counted (every case is in the kept results).
SHOWN_IDS = 10


def listed(nodeids: Iterable[str]) -> str:
    """``a, b, c``; past ``SHOWN_IDS``, the first few and how many more (one FAIL line once inlined 344 ids)."""
    names = list(nodeids)
    if len(names) <= SHOWN_IDS:
        return ", ".join(names)
    return (", ".join(names[:SHOWN_IDS]) + f", ... and {len(names) - SHOWN_IDS} more "
            "(every case is in the kept results: outcomes.json)")


def _many(nodeids: Sequence[str]) -> str:
    return f" ({len(nodeids)})" if len(nodeids) > SHOWN_IDS else ""


def _names(nodeids: Iterable[str]) -> str:
    names = sorted(nodeids)
    return listed(names) if names else "none"


def _one_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:200]
