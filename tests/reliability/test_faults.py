"""Tests that loop, crash, fork, spew or read stdin; red and flaky baselines; signals, a second
run, a read-only checkout and a full temporary disk: each gets its exit code and message, and
the project tree is byte-identical afterwards (see ``faults.py`` for how runs are shared)."""

from __future__ import annotations


import pytest

from tests.reliability.corpus import Observed
from tests.reliability.faults import FAULT_CASES, SCENARIOS, FaultCase, SignalRun, Unavailable, problems


@pytest.fixture(scope="module")
def scenario_rows(tmp_path_factory: pytest.TempPathFactory):
    """Runs each scenario once for the module (they are the slow part); rows by case name.

    The three signal subjects start first, so their fork servers boot while the in-process
    scenarios run; whatever is still running at the end of the module is killed.
    """
    results: dict[str, list[Observed] | Unavailable] = {}
    started: list[SignalRun] = []

    def rows(scenario: str) -> dict[str, Observed]:
        if not started:
            started.append(SignalRun(tmp_path_factory.mktemp("signals")))
        if scenario not in results:
            try:
                produce = started[0].finish if scenario == "signals" else lambda: SCENARIOS[scenario](
                    tmp_path_factory.mktemp(scenario))
                results[scenario] = produce()
            except Unavailable as exc:
                results[scenario] = exc
        found = results[scenario]
        if isinstance(found, Unavailable):
            pytest.skip(f"needs: {found}")
        return {row.name: row for row in found}

    yield rows
    for run in started:
        run.kill()


@pytest.mark.slow
@pytest.mark.parametrize("case", FAULT_CASES, ids=[c.name for c in FAULT_CASES])
def test_each_fault_gets_its_exit_code_and_message_and_leaves_the_tree_byte_identical(
        case: FaultCase, scenario_rows) -> None:
    seen = scenario_rows(case.scenario)[case.name]
    assert problems(case, seen) == [], seen.output[-4000:]


def test_every_fault_case_is_produced_by_its_scenario() -> None:
    assert {c.scenario for c in FAULT_CASES} == set(SCENARIOS)
    assert len({c.name for c in FAULT_CASES}) == len(FAULT_CASES)
