"""Counting assertions is opt-in (issue 15): a gate run without it behaves as the project's own pytest.

pytest's assertion-pass hook (``-o enable_assertion_pass_hook=true``) rewrites every ``assert`` so a
PASSING one also formats its explanation; the rewritten code then keeps the compared objects alive
(a weakref test reads its referent back) and reprs them (a CUDA tensor inside a capture is read). So
the hook is on only for a gate that says ``count_assertions: true``; otherwise passing assertions
read "not counted", never 0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import COUNT_ASSERTIONS_ENV
from harness.rows.executor import Executor, Run, pytest_argv
from harness.gates.gatefile import load_gate_files
from harness.run.runner import RunOptions, catalog_materializer, run_gates
from mutations.model import Catalog
from reports.outcome import CaseOutcome, count_phrase
from tests.reports.fixture_projects import CALC, shared_server, write_project

#: Three weakref tests that pass under plain pytest and fail when a passing assert is formatted
#: (the hook's rewrite holds the object alive past ``del``), plus one that passes either way.
WEAKREF = {
    "weak/__init__.py": "KIND = 'code under test'\n",
    "tests/test_weak.py": (
        "import weakref\n\n\nclass T:\n    alive = True\n\n\n"
        "def test_identity():\n    t = T()\n    r = weakref.ref(t)\n    assert r() is t\n    del t\n"
        "    assert r() is None\n\n\n"
        "def test_attribute():\n    t = T()\n    r = weakref.ref(t)\n    assert t.alive\n    del t\n"
        "    assert r() is None\n\n\n"
        "def test_call():\n    t = T()\n    r = weakref.ref(t)\n    assert isinstance(t, T)\n    del t\n"
        "    assert r() is None\n\n\n"
        "def test_list():\n    t = T()\n    r = weakref.ref(t)\n    assert [t] == [r()]\n    del t\n"
        "    assert r() is None\n"
    ),
}
WEAK_IDS = ["test_attribute", "test_call", "test_identity", "test_list"]


@pytest.fixture
def executor(tmp_path: Path) -> Executor:
    return Executor(shared_server(), tmp_path / "work")


def test_without_count_assertions_a_run_does_not_change_weakref_tests_and_says_assertions_were_not_counted(
        tmp_path: Path, executor: Executor) -> None:
    tree = write_project(tmp_path / "p", WEAKREF)
    run = executor.execute(Run("weak", tree, ("tests",), timeout=60))
    assert sorted((c.nodeid.split("::")[1], c.kind) for c in run.cases) == [(n, "passed") for n in WEAK_IDS]
    assert all(c.assertions_passed is None for c in run.cases)
    assert run.summary() == "4 cases, 4 passed, 0 failed, assertions not counted, exit 0"


def test_with_count_assertions_the_hook_is_on_and_counts_are_numbers(tmp_path: Path, executor: Executor) -> None:
    """The mechanism, shown: the same tests with the hook on fail (why it must stay opt-in)."""
    tree = write_project(tmp_path / "p", WEAKREF)
    run = executor.execute(Run("weak", tree, ("tests",), env={COUNT_ASSERTIONS_ENV: "1"}, timeout=60))
    kinds = {c.nodeid.split("::")[1]: c.kind for c in run.cases}
    assert sorted(n for n, k in kinds.items() if k == "failed") == ["test_attribute", "test_call", "test_identity"]
    by_name = {c.nodeid.split("::")[1]: c for c in run.cases}
    assert (by_name["test_list"].assertions_passed, by_name["test_list"].assertions_failed) == (2, 0)
    assert (by_name["test_call"].assertions_passed, by_name["test_call"].assertions_failed) == (1, 1)


def test_failed_assertions_are_counted_without_the_hook(tmp_path: Path, executor: Executor) -> None:
    """``expect.counts.assertions`` (failed assertions of the red cases) needs no hook: it comes from the report."""
    files = {**CALC, "calc/ops.py": CALC["calc/ops.py"].replace("a + b", "a - b")}
    run = executor.execute(Run("red", write_project(tmp_path / "p", files), ("tests/test_add.py",), timeout=60))
    assert [(c.kind, c.assertions_failed, c.assertions_passed) for c in run.cases] == [("failed", 1, None)] * 2


def test_the_command_line_turns_the_hook_on_only_when_the_run_counts(tmp_path: Path) -> None:
    plain = pytest_argv(Run("r", tmp_path, ("tests",)), tmp_path / "j.xml", tmp_path / "c.json")
    counting = pytest_argv(Run("r", tmp_path, ("tests",), env={COUNT_ASSERTIONS_ENV: "1"}),
                           tmp_path / "j.xml", tmp_path / "c.json")
    assert "enable_assertion_pass_hook=true" not in plain
    assert "enable_assertion_pass_hook=true" in counting


def test_count_phrase_says_not_counted_rather_than_zero() -> None:
    uncounted = [CaseOutcome("t::a", "failed", assertions_passed=None, assertions_failed=1),
                 CaseOutcome("t::b", "passed", assertions_passed=None)]
    assert count_phrase(uncounted) == "2 cases, 1 passed, 1 failed, assertions not counted"
    counted = [CaseOutcome("t::a", "failed", assertions_passed=3, assertions_failed=1)]
    assert count_phrase(counted) == "1 case, 0 passed, 4 assertions, 1 failed"
    assert CaseOutcome("t::b", "passed", assertions_passed=None).assertions is None


def test_uncounted_the_failed_figure_counts_failed_cases_as_expect_counts_failed_does() -> None:
    # One case failed on an assert, one on an exception (no failed assertion), one errored: 2 failed cases.
    cases = [CaseOutcome("t::a", "failed", assertions_passed=None, assertions_failed=1),
             CaseOutcome("t::b", "failed", assertions_passed=None, assertions_failed=0),
             CaseOutcome("t::c", "error", assertions_passed=None)]
    assert count_phrase(cases) == "3 cases, 0 passed, 2 failed, assertions not counted"


_GATE = """version: 1
gates:
  - id: weak
    kind: rule
    title: weakref tests under a gate
    source: {{mutation: m}}
    select: [tests]
{extra}    expect: {{red: {{count: 0}}}}
"""


def _catalog() -> Catalog:
    from tests.reports.fixture_projects import catalog, mutation

    return catalog(mutation("m", "class T:", "class T:  # changed", target="tests/test_weak.py"))


def test_a_gate_without_count_assertions_passes_on_weakref_tests_and_its_message_says_not_counted(
        tmp_path: Path) -> None:
    """End to end: the gate runs the weakref tests (baseline twice, then the mutation's row): all green."""
    project = write_project(tmp_path / "p", {**WEAKREF, "gates/g.yaml": _GATE.format(extra="")})
    gates = load_gate_files([project / "gates"], project_root=project, catalog=_catalog())
    report, code = run_gates(gates, project=project, options=RunOptions(progress=False),
                             materializer=catalog_materializer(_catalog()), launcher=shared_server(),
                             stdout=open("/dev/null", "w"))
    assert not report.baseline_red, [c.message for r in report.baseline_red for c in r.cases]
    [outcome] = report.outcomes
    assert outcome.verdict.value == "PASS", outcome.message
    assert "assertions not counted" in outcome.message


def test_the_gate_key_count_assertions_turns_counting_on_for_that_gate_only(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", {**WEAKREF, "gates/g.yaml": _GATE.format(extra="    count_assertions: true\n")})
    [gate] = load_gate_files([project / "gates"], project_root=project, catalog=_catalog())
    assert gate.env.get(COUNT_ASSERTIONS_ENV) == "1"
    plain = write_project(tmp_path / "q", {**WEAKREF, "gates/g.yaml": _GATE.format(extra="")})
    [gate] = load_gate_files([plain / "gates"], project_root=plain, catalog=_catalog())
    assert COUNT_ASSERTIONS_ENV not in gate.env


def test_count_assertions_must_be_a_boolean_and_the_error_names_the_line_and_the_fix(tmp_path: Path) -> None:
    from harness.errors import GateFileError

    project = write_project(tmp_path / "p", {**WEAKREF, "gates/g.yaml": _GATE.format(extra="    count_assertions: 3\n")})
    with pytest.raises(GateFileError) as caught:
        load_gate_files([project / "gates"], project_root=project, catalog=_catalog())
    text = str(caught.value)
    assert "gates/g.yaml:8" in text and "count_assertions" in text and "true or false" in text


# --- pytest-xdist: a project whose own settings (or a gate's PYTEST_ADDOPTS) say ``-n`` -----------------

XDIST = {
    **CALC,
    "calc/ops.py": CALC["calc/ops.py"].replace("a + b", "a - b"),
    "tests/test_many.py": "".join(f"def test_{i}():\n    assert {i} == {i}\n    assert {i} + 1 > {i}\n\n\n"
                                  for i in range(6)),
}


@pytest.mark.slow
@pytest.mark.parametrize("how", ["gate-env", "project-addopts"])
def test_under_xdist_cases_and_assertion_counts_come_from_the_workers_not_zero(
        tmp_path: Path, executor: Executor, how: str) -> None:
    pytest.importorskip("xdist", reason="pytest-xdist is in the test extra (pyproject.toml)")
    files = dict(XDIST)
    env = {COUNT_ASSERTIONS_ENV: "1"}
    if how == "gate-env":
        env["PYTEST_ADDOPTS"] = "-n 2"
    else:
        files["pyproject.toml"] = "[tool.pytest.ini_options]\naddopts = '-n 2'\n"
    tree = write_project(tmp_path / "p", files)
    run = executor.execute(Run("xdist", tree, ("tests",), env=env, timeout=120))
    by_name = {c.nodeid: c for c in run.cases}
    assert len(run.cases) == 9, run.cases
    assert [by_name[f"tests/test_many.py::test_{i}"].assertions_passed for i in range(6)] == [2] * 6
    red = sorted((c.nodeid, c.assertions_failed, c.assertions_passed) for c in run.red)
    assert red == [("tests/test_add.py::test_add_small", 1, 0), ("tests/test_add.py::test_add_zero", 1, 0)]
    assert by_name["tests/test_mul.py::test_mul"].assertions_passed == 1


@pytest.mark.slow
def test_under_xdist_without_counting_passing_assertions_read_not_counted(tmp_path: Path, executor: Executor) -> None:
    pytest.importorskip("xdist", reason="pytest-xdist is in the test extra (pyproject.toml)")
    tree = write_project(tmp_path / "p", XDIST)
    run = executor.execute(Run("xdist", tree, ("tests",), env={"PYTEST_ADDOPTS": "-n 2"}, timeout=120))
    assert len(run.cases) == 9 and len(run.red) == 2
    assert all(c.assertions_passed is None for c in run.cases)
    assert sorted(c.assertions_failed for c in run.red) == [1, 1]
    assert "assertions not counted" in run.summary()


@pytest.mark.slow
def test_under_xdist_a_project_module_a_worker_loaded_from_outside_the_copy_still_makes_the_run_an_error(
        tmp_path: Path, executor: Executor) -> None:
    """The check that the copy's code is what ran (``harness/rows/import_roots.py``) reads the WORKERS' modules."""
    pytest.importorskip("xdist", reason="pytest-xdist is in the test extra (pyproject.toml)")
    elsewhere = write_project(tmp_path / "elsewhere", {"calc/__init__.py": "", "calc/ops.py": CALC["calc/ops.py"]})
    swap = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('calc.ops', {str(elsewhere / 'calc/ops.py')!r})\n"
            "module = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(module)\n"
            "sys.modules['calc.ops'] = module\n\n\ndef test_swapped():\n    assert module.add(1, 1) == 2\n")
    tree = write_project(tmp_path / "p", {**CALC, "tests/test_swap.py": swap})
    run = executor.execute(Run("xdist", tree, ("tests",), env={"PYTEST_ADDOPTS": "-n 2"}, timeout=120))
    [error] = run.errors
    assert "the copy's code is not what ran" in error.message and str(elsewhere / "calc/ops.py") in error.message


def test_the_json_report_writes_null_and_not_counted_and_the_terminal_line_says_so() -> None:
    from reports.json_out import run_to_json
    from reports.outcome import RunOutcome

    run = RunOutcome("r", "completed", 1, (CaseOutcome("t::a", "failed", assertions_passed=None, assertions_failed=1),))
    data = run_to_json(run)
    assert data["cases"][0]["assertions_passed"] is None
    assert data["summary"] == "1 case, 0 passed, 1 failed, assertions not counted, exit 1"


def test_a_counting_gate_and_a_plain_one_on_the_same_mutation_get_their_own_rows(tmp_path: Path) -> None:
    """Rows are keyed by environment: the hook never reaches the gate that did not ask for it."""
    from harness.plan.planner import make_plan
    from tests.reports.fixture_projects import catalog, mutation

    two = ("version: 1\ngates:\n"
           "  - id: plain\n    kind: rule\n    source: {mutation: sub}\n    select: [tests]\n"
           "    expect: {red: {nodeids: [tests/test_add.py::test_add_small, tests/test_add.py::test_add_zero]}}\n"
           "  - id: counted\n    kind: rule\n    source: {mutation: sub}\n    select: [tests]\n    count_assertions: true\n"
           "    expect: {red: {nodeids: [tests/test_add.py::test_add_small, tests/test_add.py::test_add_zero]}}\n")
    project = write_project(tmp_path / "p", {**CALC, "gates/g.yaml": two})
    cat = catalog(mutation("sub", "a + b", "a - b"))
    gates = load_gate_files([project / "gates"], project_root=project, catalog=cat)
    plan = make_plan(gates)
    assert len(plan.baselines) == 2 and len(plan.rows) == 4
    report, _ = run_gates(gates, project=project, options=RunOptions(progress=False),
                          materializer=catalog_materializer(cat), launcher=shared_server(),
                          stdout=open("/dev/null", "w"))
    messages = {o.gate: o.message for o in report.outcomes}
    assert {o.gate: o.verdict.value for o in report.outcomes} == {"plain": "PASS", "counted": "PASS"}, messages
    assert "(2 cases, 0 passed, 2 failed, assertions not counted)" in messages["plain"]
    assert "(2 cases, 0 passed, 2 assertions, 2 failed)" in messages["counted"]


def test_the_project_setting_turns_counting_on_for_every_gate_and_a_gate_can_turn_it_off(tmp_path: Path) -> None:
    pyproject = "[tool.seamgate]\ncount_assertions = true\n"
    second = _GATE.replace("id: weak", "id: plain").format(extra="    count_assertions: false\n")
    gates = _GATE.format(extra="") + second.split("gates:\n", 1)[1]
    project = write_project(tmp_path / "p", {**WEAKREF, "pyproject.toml": pyproject, "gates/g.yaml": gates})
    loaded = {g.id: g for g in load_gate_files([project / "gates"], project_root=project, catalog=_catalog())}
    assert loaded["weak"].env.get(COUNT_ASSERTIONS_ENV) == "1"
    assert COUNT_ASSERTIONS_ENV not in loaded["plain"].env


def test_the_project_setting_must_be_a_boolean(tmp_path: Path) -> None:
    from harness.config import load_config
    from harness.errors import ConfigError

    project = write_project(tmp_path / "p", {"pyproject.toml": "[tool.seamgate]\ncount_assertions = 'yes'\n"})
    with pytest.raises(ConfigError) as caught:
        load_config(project)
    assert "pyproject.toml:2" in str(caught.value) and "'count_assertions' must be true or false" in str(caught.value)
