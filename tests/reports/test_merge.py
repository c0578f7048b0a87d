"""reports.merge on its own: what a merged result holds, and the exact words of each refusal.

Written after a sweep of reports/merge.py against the CLI merge tests left 27 of 126 mutants alive
(among them ``range(2, n + 1)``: a missing FIRST shard went unnoticed). With these tests and the CLI's
merge tests every mutant is killed but five equivalent ones: ``most_common(1)`` as ``most_common()``
or ``most_common(2)`` (twice each; only element 0 is read) and dropping ``shard=None`` (the default).
Command: ``seamgate sweep reports/merge.py --tests tests/reports/test_merge.py --tests
tests/reports/test_report_cli.py::<each merge test> --output /tmp/sw``."""

from __future__ import annotations

from pathlib import Path

import pytest

from reports.json_out import plan_digest
from reports.merge import MergeError, merge, merge_problems
from reports.mutants import MutantOutcome, SweepResult
from reports.outcome import ArmOutcome, Report, RunOutcome, Verdict
from reports.results import KeptResult

PLAN = plan_digest([("g1", "cpu-emulated"), ("g2", "cpu-emulated")])
SWEEP = SweepResult(scope=("calc.py",), mutants=(MutantOutcome("m1", "calc.py", 3, status="killed"),))


def part(k: int | None, n: int = 2, *, plan: str = PLAN, name: str = "", **report) -> KeptResult:
    """Shard ``k`` of ``n`` holding gate ``g<k>``; its exit code is ``k`` so the worst one shows."""
    outcomes = (ArmOutcome(f"g{k}", "cpu-emulated", Verdict.PASS),)
    return KeptResult(source=Path(f"/kept/{name or f'p{k}'}/outcomes.json"), report=Report(outcomes=outcomes, **report),
                      exit_code=k or 0, shard=(k, n) if k else None, plan=plan)


def test_a_merged_result_holds_every_part_in_shard_order_with_the_first_parts_identity():
    red = RunOutcome("baseline cpu-emulated tests", "completed", 1)
    second = part(2, baseline_red=(red,), interrupted=True, unfinished=("g9",))
    merged = merge([second, part(1)])
    assert [o.gate for o in merged.report.outcomes] == ["g1", "g2"]
    assert merged.report.baseline_red == (red,) and merged.report.interrupted and merged.report.unfinished == ("g9",)
    assert merged.source == Path("/kept/p1/outcomes.json") and merged.plan == PLAN and merged.shard is None
    assert merged.exit_code == 2  # the worst part's code; the CLI recomputes the run's own


def test_an_uninterrupted_merge_is_not_interrupted():
    assert merge([part(1), part(2)]).report.interrupted is False


def test_a_missing_first_shard_is_named_like_any_other():
    assert merge_problems([part(2, 3), part(3, 3)]) == ["shard 1/3 is missing"]


def test_parts_none_of_which_is_a_shard_are_each_named():
    assert merge_problems([part(None, name="a"), part(None, name="b")]) == [
        "/kept/a is not a shard (it was not run with --shard K/N)",
        "/kept/b is not a shard (it was not run with --shard K/N)"]
    assert merge_problems([]) == ["no part to merge"]


def test_the_refusal_states_every_problem_in_full():
    other = "c" * 64
    parts = [part(1, name="a"), part(1, name="b"), part(2, plan=other, name="c"),
             KeptResult(Path("/kept/d/outcomes.json"), Report(), 0, shard=(3, 3), plan=PLAN, sweep=SWEEP),
             KeptResult(Path("/kept/e/outcomes.json"), Report(), 0, shard=(2, 2), plan=PLAN, sweep=SWEEP)]
    with pytest.raises(MergeError) as caught:
        merge(parts)
    assert str(caught.value) == (
        "cannot merge: /kept/d (shard 3/3) is one of 3 shards, the others of 2; "
        f"/kept/c (shard 2/2) was cut from another plan ({other[:12]}, the others {PLAN[:12]}: other gates, "
        "--gate or --arm); "
        "shard 1/2 is given 2 times: /kept/a, /kept/b; "
        "shard 2/2 is given 2 times: /kept/c, /kept/e; "
        "2 parts hold a sweep (/kept/d, /kept/e); a merge keeps at most one: render each sweep on its own")
    assert caught.value.problems[0].startswith("/kept/d (shard 3/3)")
