"""The one timeout policy (``harness/rows/time_limits.py``): a baseline row's limit, a gate's changed row's, a
mutant row's, each figure exact and each source in the words a TIMEOUT message quotes."""

from __future__ import annotations

import pytest

from harness.rows.time_limits import (BASELINE_TIMEOUT, MutantTimes, TimeLimit, baseline_limit, case_rule,
                                      mutant_rule, row_limit, session_limit)
from reports.outcome import CaseOutcome, RunOutcome


def case(nodeid: str, duration: float) -> CaseOutcome:
    return CaseOutcome(nodeid, "passed", duration=duration)


# ---- a baseline row ----------------------------------------------------------------------

def test_a_baseline_takes_the_largest_gate_timeout_when_every_gate_reading_it_sets_one() -> None:
    assert baseline_limit([30.0, 50.0], 600.0) == TimeLimit(
        50.0, "the baseline's limit: the largest `timeout` of the gates reading it (50 s)")


def test_a_baseline_some_gate_of_which_sets_no_timeout_takes_baseline_timeout_and_says_where_it_is_set() -> None:
    source = "the baseline's limit: baseline_timeout = 3 s from [tool.seamgate] in pyproject.toml (default 600)"
    assert baseline_limit([30.0, None], 3.0) == TimeLimit(3.0, source)
    assert baseline_limit([], 3.0) == TimeLimit(3.0, source)  # no gate reads it: nothing to take from gates
    assert BASELINE_TIMEOUT == 600.0


# ---- a gate's changed row ----------------------------------------------------------------

def test_a_rows_time_limit_is_the_largest_stated_else_a_factor_of_its_expected_time() -> None:
    baseline = RunOutcome("b", "completed", 0, (case("a", 2.0), case("b", 4.0)), wall=10.0)
    assert row_limit(baseline, None, [30.0, 50.0]) == 50.0
    assert row_limit(baseline, None, []) == 5.0 * 10.0  # fixed 4 s + cases 6 s
    assert row_limit(baseline, ["a"], []) == 5.0 * (4.0 + 2.0)
    assert row_limit(baseline, ["a", "z"], [None]) == 30.0  # an unknown case counts 0 s
    assert row_limit(baseline, ["a"], [None, 100.0]) == 100.0  # one stated limit above the derived one
    assert row_limit(baseline, ["a"], [None, 1.0]) == 30.0
    assert row_limit(None, None, []) == 10.0 and row_limit(None, None, [], floor=3.0) == 3.0
    small = RunOutcome("b", "completed", 0, (case("a", 0.5),), wall=0.2)  # wall below the cases' sum
    assert row_limit(small, None, []) == 10.0 and row_limit(small, None, [], floor=1.0, factor=4.0) == 2.0


@pytest.mark.parametrize("gate_timeout, baseline_wall, limit", [
    (None, None, 10.0), (None, 0.5, 10.0), (None, 2.0, 10.0), (None, 2.5, 12.5), (None, 30.0, 150.0),
    (3.0, 100.0, 3.0), (45.0, None, 45.0),
])
def test_a_run_may_take_the_gates_limit_else_five_baselines_but_at_least_ten_seconds(
        gate_timeout: float | None, baseline_wall: float | None, limit: float) -> None:
    baseline = None if baseline_wall is None else RunOutcome("b", "completed", 0, (), wall=baseline_wall)
    assert row_limit(baseline, None, [gate_timeout]) == pytest.approx(limit)


# ---- a mutant row ------------------------------------------------------------------------

TIMES = MutantTimes({"a": 0.014, "b": 0.014, "c": 0.014}, ("a", "b", "c"))


def test_a_mutants_limit_is_ten_times_its_cases_baseline_time_plus_ten_seconds_and_says_so() -> None:
    assert TIMES.limit(["a", "b", "c"]) == TimeLimit(
        10.42, "limit 10.42 s = 10 x 0.042 s (the baseline's time of its 3 case(s)) + 10 s")
    assert TIMES.limit(None) == TIMES.limit(["a", "b", "c"])  # None: every baseline case


def test_a_case_the_baseline_did_not_time_counts_one_second_and_the_source_counts_it() -> None:
    assert TIMES.limit(["a", "z"]) == TimeLimit(
        20.14, "limit 20.14 s = 10 x 1.014 s (the baseline's time of its 2 case(s), 1 of them untimed, "
               "counted 1 s each) + 10 s")


def test_a_mutant_that_collects_its_own_cases_has_thirty_seconds_more_and_a_child_says_what_for() -> None:
    plain = TIMES.limit(["a"])
    assert TIMES.collecting(["a"], child=True) == TimeLimit(plain.seconds + 30.0,
                                                            plain.source + " + 30 s for its collection")
    assert TIMES.collecting(["a"], child=False) == TimeLimit(plain.seconds + 30.0, plain.source + " + 30 s")


def test_the_mutant_rule_in_one_line_and_a_sessions_limit_its_childrens_plus_a_minute() -> None:
    assert mutant_rule() == "10 x the baseline's time of a mutant's cases + 10 s"
    assert session_limit([10.5, 20.0]) == 90.5 and session_limit([]) == 60.0


def test_a_mutants_limit_is_kept_to_the_millisecond() -> None:
    # 10 x 0.00012345 s + 10 s = 10.0012345 s: the limit and its words say 10.001 (rounded to the millisecond)
    limit = MutantTimes(durations={"t::a": 0.00012345}, every_case=["t::a"]).limit(None)
    assert limit.seconds == 10.001
    assert limit.source.startswith("limit 10.001 s = ")


def test_a_limit_with_more_seconds_and_no_reason_says_only_the_seconds() -> None:
    assert TimeLimit(10.0, "base").plus(5.0) == TimeLimit(15.0, "base + 5 s")


def test_a_killed_mutants_case_may_take_ten_times_its_baseline_time_plus_two_seconds_to_the_millisecond() -> None:
    # --all-killers: 10 x 0.00012345 s + 2 s = 2.0012345 s, kept to the millisecond; an untimed case counts 1 s
    times = MutantTimes(durations={"t::a": 0.00012345, "t::b": 0.05}, every_case=["t::a", "t::b", "t::c"])
    assert [times.case_limit(c) for c in ("t::a", "t::b", "t::c")] == [2.001, 2.5, 12.0]


def test_the_case_rule_in_one_line() -> None:
    assert case_rule() == ("once a mutant is killed, each case it still runs: 10 x the baseline's time of the case "
                           "+ 2 s; past it the case is cut and counted a killer")
