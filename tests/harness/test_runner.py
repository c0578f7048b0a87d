"""The runner end to end on tiny fixture projects: baselines, mutations, verdicts, reports, lock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.exit_codes import ExitCode
from harness.results.lock import RepositoryLock
from harness.gates.model import Counts, RedSet
from harness.plan.planner import make_plan, shard_gates
from reports.outcome import Verdict
from tests.reports.fixture_projects import CALC, catalog, gate, mutation, run_quietly, write_project

ADD = "tests/test_add.py"
MUTATIONS = catalog(
    mutation("add-zero-is-one", "return a + b", "return a + b + (1 if 0 in (a, b) else 0)"),
    mutation("add-off-by-one", "return a + b", "return a + b + 1"),
    mutation("ops-syntax", "def mul(a, b):", "def mul(a, b)"),
    mutation("rotted", "return a * b * 1", "return 0"),
    mutation("add-loops", "return a + b", "while True:\n        pass"),
    mutation("add-segfaults", "return a + b", "import ctypes\n    return ctypes.string_at(0)"),
)


def run(project: Path, *gates, **options):
    return run_quietly(project, gates, MUTATIONS, **options)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "proj")


def verdicts(report) -> dict[str, Verdict]:
    return {o.gate: o.verdict for o in report.outcomes}


def test_a_mutation_that_reds_exactly_the_expected_case_passes_and_one_with_an_extra_red_fails(project):
    exact = gate("exact", mutation="add-zero-is-one", red=RedSet(nodeids=(f"{ADD}::test_add_zero",)),
                 counts=Counts(cases=1, passed=0, failed=1, assertions=1))
    extra = gate("extra", mutation="add-off-by-one", red=RedSet(nodeids=(f"{ADD}::test_add_zero",)))
    report, code, text = run(project, exact, extra)
    assert verdicts(report) == {"exact": Verdict.PASS, "extra": Verdict.FAIL}
    assert code is ExitCode.GATE_FAILED
    failed = next(o for o in report.outcomes if o.gate == "extra")
    assert "extra red: tests/test_add.py::test_add_small" in failed.message
    assert "2 of 3 cases passing" in next(o for o in report.outcomes if o.gate == "exact").message
    assert "FAIL" in text and "exit GATE_FAILED" in text


def test_a_mutation_that_breaks_import_is_an_error_of_the_gate(project):
    report, code, _ = run(project, gate("syntax", mutation="ops-syntax", red=RedSet(files=(ADD,))))
    assert verdicts(report) == {"syntax": Verdict.ERROR} and code is ExitCode.GATE_ERROR
    assert "broke import/collection" in report.outcomes[0].message


def test_a_mutation_whose_anchor_vanished_is_an_error_that_says_it_no_longer_applies(project):
    report, code, _ = run(project, gate("rot", mutation="rotted", red=RedSet(count=1)))
    assert verdicts(report) == {"rot": Verdict.ERROR} and code is ExitCode.GATE_ERROR
    assert "no longer applies" in report.outcomes[0].message


def test_a_red_baseline_stops_the_run_and_names_the_red_cases(tmp_path):
    project = write_project(tmp_path / "p", {**CALC, "calc/ops.py": CALC["calc/ops.py"].replace("a * b", "a ** b")})
    report, code, text = run(project, gate("g", mutation="add-off-by-one", red=RedSet(files=(ADD,))))
    assert code is ExitCode.BASELINE_RED and report.outcomes == ()
    assert "tests/test_mul.py::test_mul" in text and "BASELINE RED" in text


def test_an_arm_this_machine_cannot_run_is_owed_with_its_reason(project):
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("this test needs a machine WITHOUT a CUDA GPU: it checks the OWED path")
    report, code, _ = run(project, gate("g", arms=("cpu-emulated", "cuda")), fail_on_owed=True)
    by_arm = {o.arm: o for o in report.outcomes}
    assert by_arm["cpu-emulated"].verdict is Verdict.PASS and by_arm["cuda"].verdict is Verdict.OWED
    assert "needs an NVIDIA GPU" in by_arm["cuda"].message and code is ExitCode.OWED
    assert by_arm["cpu-emulated"].provenance.device == "cpu" and len(by_arm["cpu-emulated"].provenance.code_hash) == 64


@pytest.mark.slow
def test_a_hung_run_is_a_timeout_a_crashing_run_a_crash_and_the_other_gates_still_run(project):
    hung = gate("hung", mutation="add-loops", red=RedSet(files=(ADD,)), timeout=1.5)
    crash = gate("crash", mutation="add-segfaults", red=RedSet(files=(ADD,)))
    fine = gate("fine", mutation="add-off-by-one", red=RedSet(files=(ADD,)))
    report, code, _ = run(project, hung, crash, fine, jobs=2)
    assert verdicts(report) == {"hung": Verdict.TIMEOUT, "crash": Verdict.CRASH, "fine": Verdict.PASS}
    assert code is ExitCode.GATE_ERROR


def test_json_and_junit_reports_have_one_entry_per_gate_and_arm_with_owed_as_skipped(project, tmp_path):
    from junitparser import JUnitXml, Skipped

    report, _, _ = run(project, gate("g", mutation="add-off-by-one", red=RedSet(files=(ADD,)), arms=("cpu-emulated", "rocm")),
                       json=tmp_path / "out/r.json", junit=tmp_path / "out/r.xml")
    data = json.loads((tmp_path / "out/r.json").read_text())
    assert [(o["gate"], o["arm"], o["verdict"]) for o in data["outcomes"]] == [("g", "cpu-emulated", "PASS"), ("g", "rocm", "OWED")]
    cases = {c.name: c for suite in JUnitXml.fromfile(str(tmp_path / "out/r.xml")) for c in suite}
    assert set(cases) == {"g[cpu-emulated]", "g[rocm]"} and cases["g[cpu-emulated]"].is_passed
    assert isinstance(cases["g[rocm]"].result[0], Skipped) and "no backend for arm 'rocm'" in cases["g[rocm]"].result[0].message
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["r.json", "r.xml"]  # no temp files left


def test_a_second_run_in_the_same_repository_is_locked_out(project):
    with RepositoryLock(project):
        report, code, text = run(project, gate("g"))
    assert code is ExitCode.LOCKED and "holds" in text and report.outcomes == ()


def test_the_users_tree_is_untouched_and_no_temp_folder_is_left(project):
    from tests.reports.fixture_projects import tree_digest

    import os
    import tempfile

    # Only this process's folders: other seamgate runs on the machine come and go meanwhile.
    mine = f"seamgate-run-{os.getpid()}-*"
    before, leftovers = tree_digest(project), set(Path(tempfile.gettempdir()).glob(mine))
    run(project, gate("g", mutation="add-off-by-one", red=RedSet(files=(ADD,))))
    assert tree_digest(project) == before
    assert set(Path(tempfile.gettempdir()).glob(mine)) == leftovers


def test_gate_filter_and_shards_split_the_gates_deterministically():
    gates = [gate(f"g{i}") for i in range(7)]
    shards = [{g.id for g in shard_gates(gates, (k, 3))} for k in (1, 2, 3)]
    assert set().union(*shards) == {g.id for g in gates} and sum(map(len, shards)) == 7
    assert shards == [{g.id for g in shard_gates(list(reversed(gates)), (k, 3))} for k in (1, 2, 3)]
    plan = make_plan(gates, ids=("g3",), unavailable={"cuda": "OWED: no gpu"})
    assert [c.gate.id for c in plan.checks] == ["g3"] and len(plan.baselines) == 1
    from harness.errors import CommandLineError

    with pytest.raises(CommandLineError, match="no such gate"):
        make_plan(gates, ids=("nope",))


def test_arm_filter_keeps_only_the_named_arms_and_drops_gates_left_without_one():
    from harness.plan.planner import restrict_arms

    both, cpu = gate("both", arms=("cpu-emulated", "cuda")), gate("cpu", arms=("cpu-emulated",))
    assert [(g.id, g.arms) for g in restrict_arms([both, cpu], ("cuda",))] == [("both", ("cuda",))]
    assert restrict_arms([both, cpu], ()) == [both, cpu]
