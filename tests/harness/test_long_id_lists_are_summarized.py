"""A FAIL line never inlines hundreds of node ids: the first few and how many more, the rest in the kept results."""

from __future__ import annotations

from harness.gates.model import Expectation, RedSet
from harness.judge.evaluate import listed, red_set_problems
from reports.outcome import CaseOutcome, RunOutcome


def test_an_extra_red_of_344_cases_names_the_first_ten_and_counts_the_rest() -> None:
    cases = tuple(CaseOutcome(f"tests/x.py::test_{i:03d}", "failed") for i in range(344))
    run = RunOutcome("mutation m cpu-emulated", "completed", 1, cases)
    [problem] = red_set_problems(Expectation(red=RedSet(nodeids=("tests/x.py::test_000",))), run)
    assert problem.startswith("extra red (343): tests/x.py::test_001, tests/x.py::test_002,")
    assert "tests/x.py::test_010" in problem and "tests/x.py::test_012" not in problem
    assert problem.endswith("... and 333 more (every case is in the kept results: outcomes.json)")


def test_a_short_list_is_written_out_whole() -> None:
    cases = (CaseOutcome("tests/x.py::test_a", "failed"), CaseOutcome("tests/x.py::test_b", "failed"))
    run = RunOutcome("mutation m cpu-emulated", "completed", 1, cases)
    assert red_set_problems(Expectation(red=RedSet(nodeids=("tests/x.py::test_a",))), run) == [
        "extra red: tests/x.py::test_b"]


def test_ten_ids_are_written_out_whole_and_the_eleventh_turns_the_list_into_a_count() -> None:
    ten = [f"tests/x.py::test_{i}" for i in range(10)]
    assert listed(ten) == ", ".join(ten)
    eleven = [*ten, "tests/x.py::test_10"]
    assert listed(eleven) == (", ".join(ten) + ", ... and 1 more (every case is in the kept results: outcomes.json)")


def test_a_count_stands_before_a_list_only_when_the_list_is_cut() -> None:
    cases = tuple(CaseOutcome(f"tests/x.py::test_{i:02d}", "failed") for i in range(12))
    run = RunOutcome("mutation m cpu-emulated", "completed", 1, cases)
    [cut] = red_set_problems(Expectation(red=RedSet(nodeids=("tests/x.py::test_00",))), run)
    assert cut.startswith("extra red (11): tests/x.py::test_01, ")
    [whole] = red_set_problems(Expectation(red=RedSet(nodeids=("tests/x.py::test_00", "tests/x.py::test_01"))), run)
    assert whole.startswith("extra red: tests/x.py::test_02, ") and whole.endswith("tests/x.py::test_11")
