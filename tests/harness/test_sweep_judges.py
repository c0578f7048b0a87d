"""The CI step of issue 14 sweeps exactly the judges changed since the recorded sweep."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("sweep_judges", ROOT / "scripts" / "sweep_judges.py")
assert _SPEC is not None and _SPEC.loader is not None
judges = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(judges)


def record() -> dict[str, str]:
    return {rel: judges.sha(rel) for rel in (*judges.JUDGES, *judges.EVERYTHING)}


def pins(group=judges.JUDGES_GROUP) -> dict[str, str]:
    """What the group's files' equivalence entries pin now (a record by statements holds it)."""
    return {rel: judges.pins_sha(rel) for rel in group.files}


def test_with_nothing_changed_since_the_record_nothing_is_swept() -> None:
    assert judges.to_sweep(record(), pins=pins()) == ([], "")


def test_a_changed_judge_is_swept_alone() -> None:
    old = {**record(), "harness/judge/lane.py": "0" * 64}
    swept, why = judges.to_sweep(old, pins=pins())
    assert swept == ["harness/judge/lane.py"]
    assert "harness/judge/lane.py" in why


def test_a_changed_test_file_or_equivalents_file_sweeps_every_judge() -> None:
    for rel in ("tests/harness/test_judge_planner.py", "tests/equivalent_mutants.yaml", "harness/sweep/pytest_sweep.py"):
        swept, why = judges.to_sweep({**record(), rel: "0" * 64})
        assert swept == list(judges.JUDGES) and rel in why


def test_without_a_record_every_judge_is_swept() -> None:
    assert judges.to_sweep({})[0] == list(judges.JUDGES)


def test_the_step_sweeps_the_four_judges_with_their_table_tests() -> None:
    assert set(judges.JUDGES) == {"harness/judge/evaluate.py", "harness/judge/redfirst.py", "harness/judge/lane.py",
                                  "harness/plan/planner.py", "harness/exit_mapping.py", "harness/rows/time_limits.py"}
    assert all((ROOT / t).is_file() for t in judges.TESTS)


def test_only_the_judges_entries_of_the_equivalents_file_count(tmp_path: Path) -> None:
    # a seam/ or drivers/ equivalent added by another sweep must not re-sweep every judge in CI
    base = ("version: 1\nequivalent:\n"
            "  - mutant: harness.judge.lane.x_side_call__mutmut_17\n    line: 'x'\n    reason: r\n")
    path = tmp_path / "eq.yaml"
    path.write_text(base)
    before = judges.judges_equivalents_sha(path)
    path.write_text(base + "  - mutant: seam.scope.x_f__mutmut_1\n    line: 'y'\n    reason: r\n")
    assert judges.judges_equivalents_sha(path) == before
    path.write_text(base.replace("reason: r", "reason: another"))
    assert judges.judges_equivalents_sha(path) != before
    path.write_text(base + "  - mutant: harness.plan.planner.x_g__mutmut_2\n    line: 'z'\n    reason: r\n")
    assert judges.judges_equivalents_sha(path) != before


def test_the_reuse_group_sweeps_what_decides_what_is_not_run_and_what_is_reused() -> None:
    group = judges.GROUPS["reuse"]
    # Swept and recorded, or owed by name (issue 28's list): no file of the list is dropped silently. The
    # planner (the union of cases) is on the list too, swept and recorded in the judges group.
    assert "harness/plan/planner.py" in judges.JUDGES
    assert set(group.files) | set(judges.REUSE_OWED) | set(judges.GROUPS["evidence"].files) == {
        "harness/reach/reach.py", "harness/reach/name_reach.py", "harness/reach/incremental.py",
        "harness/results/reuse.py", "harness/plan/matrix.py", "harness/results/platforms.py",
        "harness/results/evidence.py"}
    assert not set(group.files) & set(judges.REUSE_OWED) and set(group.files) >= {"harness/results/reuse.py",
                                                                                  "harness/plan/matrix.py"}
    assert all((ROOT / t).is_file() for t in group.tests) and group.record != judges.JUDGES_GROUP.record
    assert not set(group.files) & set(judges.JUDGES)
    assert not set(judges.GROUPS["evidence"].files) & (set(group.files) | set(judges.REUSE_OWED))


def test_a_groups_record_sweeps_only_that_group() -> None:
    group = judges.GROUPS["reuse"]
    current = {rel: judges.sha(rel, group) for rel in (*group.files, *group.everything)}
    assert judges.to_sweep(current, group, pins=pins(group)) == ([], "")
    swept, why = judges.to_sweep({**current, "harness/plan/matrix.py": "0" * 64}, group, pins=pins(group))
    assert swept == ["harness/plan/matrix.py"] and "matrix.py" in why
    assert judges.to_sweep({**current, "tests/harness/test_incremental.py": "0" * 64}, group)[0] == list(group.files)


def test_an_equivalent_of_one_group_does_not_resweep_the_other(tmp_path: Path) -> None:
    path = tmp_path / "eq.yaml"
    path.write_text("version: 1\nequivalent: []\n")
    before = {name: judges.group_equivalents_sha(path, g) for name, g in judges.GROUPS.items()}
    path.write_text("version: 1\nequivalent:\n  - mutant: harness.results.reuse.x_digest__mutmut_1\n"
                    "    line: 'x'\n    reason: r\n")
    assert judges.group_equivalents_sha(path, judges.GROUPS["judges"]) == before["judges"]
    assert judges.group_equivalents_sha(path, judges.GROUPS["reuse"]) != before["reuse"]


def test_the_ci_call_without_arguments_sweeps_every_group_and_fails_when_one_fails(monkeypatch) -> None:
    calls = []

    def fake(group, *, every, record, jobs):
        calls.append((group.name, every, record))
        return {"judges": 0, "reuse": 1, "evidence": 0}[group.name]

    monkeypatch.setattr(judges, "run_group", fake)
    assert judges.main([]) == 1 and calls == [("judges", False, False), ("reuse", False, False),
                                              ("evidence", False, False)]
    calls.clear()
    assert judges.main(["--group", "judges", "--record"]) == 0 and calls == [("judges", False, True)]


def test_a_helper_module_or_conftest_the_tests_read_resweeps_their_group() -> None:
    """What a group's tests import from tests/ (and the conftest.py files above them) decides what they
    assert as much as the test files do: a change there sweeps the group again, as a test file's does."""
    evidence = judges.GROUPS["evidence"]
    full = {rel: judges.sha(rel, evidence) for rel in (*evidence.files, *evidence.everything)}
    for rel in ("tests/harness/posix_locale.py", "tests/reports/fixture_projects.py", "conftest.py"):
        swept, why = judges.to_sweep({**full, rel: "0" * 64}, evidence)
        assert swept == list(evidence.files) and rel in why, rel
