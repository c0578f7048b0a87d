"""The executor: one pytest run in a fresh child, its cases read apart, its end classified."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import COUNT_ASSERTIONS_ENV
from harness.rows.executor import Executor, Run, pytest_argv, run_environment
from harness.rows.forkserver import FreshInterpreter
from tests.reports.fixture_projects import CALC, shared_server, write_project

KINDS = {
    "tests/test_kinds.py": (
        "import pytest\n"
        "def test_pass():\n    assert 1 == 1\n    assert 2 == 2\n"
        "def test_fail():\n    x = 2\n    assert x == 2\n    assert x == 3\n"
        "@pytest.mark.skip(reason='plain skip')\ndef test_skip(): pass\n"
        "def test_owed():\n    pytest.skip('OWED: cuda arm needs a GPU')\n"
        "@pytest.mark.xfail(reason='known')\ndef test_xfail(): assert 0\n"
        "@pytest.mark.xfail(reason='fixed?')\ndef test_xpass(): pass\n"
        "@pytest.fixture\ndef broken(): raise RuntimeError('setup boom')\n"
        "def test_setup_error(broken): pass\n"
        "def test_import_inside():\n    import calc.nonexistent_module\n"
    ),
}


@pytest.fixture
def executor(tmp_path: Path) -> Executor:
    return Executor(shared_server(), tmp_path / "work")


def test_a_run_keeps_passed_failed_error_skipped_owed_xfail_and_xpass_apart(tmp_path, executor):
    tree = write_project(tmp_path / "p", {**CALC, **KINDS})
    run = executor.execute(Run("kinds", tree, ("tests/test_kinds.py",), timeout=60))
    kinds = {c.nodeid.split("::")[1]: c.kind for c in run.cases}
    assert run.end == "completed" and run.exit_code == 1
    assert kinds == {
        "test_pass": "passed", "test_fail": "failed", "test_skip": "skipped", "test_owed": "owed",
        "test_xfail": "xfailed", "test_xpass": "xpassed", "test_setup_error": "error",
        "test_import_inside": "error",  # an ImportError in a test body is a broken source, not a red
    }


def test_assertions_are_counted_per_case_passed_by_the_hook_and_failed_from_the_report(tmp_path, executor):
    # Passing assertions are counted only when the gate asks (count_assertions: true; tests/harness/test_counting.py).
    tree = write_project(tmp_path / "p", {**CALC, **KINDS})
    run = executor.execute(Run("kinds", tree, ("tests/test_kinds.py",), env={COUNT_ASSERTIONS_ENV: "1"}, timeout=60))
    by_name = {c.nodeid.split("::")[1]: c for c in run.cases}
    assert (by_name["test_pass"].assertions_passed, by_name["test_pass"].assertions_failed) == (2, 0)
    assert (by_name["test_fail"].assertions_passed, by_name["test_fail"].assertions_failed) == (1, 1)
    assert by_name["test_owed"].message.startswith("OWED:")


def test_the_run_imports_the_materialized_tree_first_so_a_mutation_changes_what_it_sees(tmp_path, executor):
    good = write_project(tmp_path / "good")
    mutated = write_project(tmp_path / "mutated", {**CALC, "calc/ops.py": CALC["calc/ops.py"].replace("a + b", "a - b")})
    assert executor.execute(Run("good", good, ("tests",), timeout=60)).red == ()
    red = executor.execute(Run("mutated", mutated, ("tests",), timeout=60)).red
    assert sorted(c.nodeid for c in red) == ["tests/test_add.py::test_add_small", "tests/test_add.py::test_add_zero"]


def test_a_tree_package_shadows_an_installed_one_of_the_same_name(tmp_path, executor):
    # ``seam`` is installed (editable) in this venv; the tree's own ``seam`` must win.
    files = {"seam/__init__.py": "WHERE = 'tree'\n",
             "tests/test_where.py": "import seam\n\ndef test_where():\n    assert seam.WHERE == 'tree'\n"}
    run = executor.execute(Run("shadow", write_project(tmp_path / "p", files), ("tests",), timeout=60))
    assert [c.kind for c in run.cases] == ["passed"]


def test_a_project_that_asks_for_fail_fast_still_runs_every_case(tmp_path, executor):
    files = {**CALC, "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-x'\n",
             "calc/ops.py": "def add(a, b):\n    return 0\n\n\ndef mul(a, b):\n    return 0\n"}
    run = executor.execute(Run("ff", write_project(tmp_path / "p", files), ("tests",), timeout=60))
    assert len(run.red) == 3


def test_a_module_that_will_not_import_is_a_collection_error_and_the_other_files_still_run(tmp_path, executor):
    # One run serves several gates (the kill matrix), so a file that will not import must not stop
    # the session for the others (--continue-on-collection-errors): pytest exits 1, not 2.
    files = {**CALC, "calc/ops.py": "def add(a, b)\n    return a + b\n",
             "tests/test_fine.py": "def test_fine():\n    assert True\n"}
    run = executor.execute(Run("broken", write_project(tmp_path / "p", files), ("tests",), timeout=60))
    assert run.exit_code == 1 and run.red == ()
    assert {c.nodeid for c in run.errors} == {"tests/test_add.py", "tests/test_mul.py"}
    assert [(c.nodeid, c.kind) for c in run.cases if c.kind == "passed"] == [("tests/test_fine.py::test_fine", "passed")]


@pytest.mark.slow
def test_a_test_stuck_in_a_loop_is_killed_at_its_limit_and_the_next_run_goes_on(tmp_path, executor):
    files = {**CALC, "tests/test_loop.py": "def test_loop():\n    while True:\n        pass\n"}
    tree = write_project(tmp_path / "p", files)
    run = executor.execute(Run("loop", tree, ("tests/test_loop.py",), timeout=1.5))
    assert run.end == "timeout" and "process group was killed" in run.detail
    after = executor.execute(Run("after", tree, ("tests/test_add.py",), timeout=60))
    assert after.end == "completed" and len(after.cases) == 2


@pytest.mark.parametrize("body", ["import os\n    os._exit(3)", "import ctypes\n    ctypes.string_at(0)"],
                         ids=["os-exit", "segfault"])
def test_a_test_that_kills_its_process_is_a_crash(tmp_path, executor, body):
    files = {**CALC, "tests/test_die.py": f"def test_die():\n    {body}\n"}
    run = executor.execute(Run("die", write_project(tmp_path / "p", files), ("tests/test_die.py",), timeout=60))
    assert run.end == "crash"
    assert ("SIGSEGV" in run.detail) if "ctypes" in body else ("no JUnit report" in run.detail)


@pytest.mark.slow
def test_a_fresh_interpreter_per_run_reports_the_same_cases_as_the_fork_server(tmp_path, executor):
    tree = write_project(tmp_path / "p", {**CALC, **KINDS})
    forked = executor.execute(Run("fork", tree, ("tests",), timeout=60))
    with FreshInterpreter() as fresh:
        spawned = Executor(fresh, tmp_path / "fresh").execute(Run("fresh", tree, ("tests",), timeout=120))
    assert [(c.nodeid, c.kind, c.assertions) for c in spawned.cases] == \
        [(c.nodeid, c.kind, c.assertions) for c in forked.cases]


def test_a_run_never_inherits_the_callers_seam_or_pytest_variables(tmp_path):
    env = run_environment({"A": "1"}, tmp_path, "cuda", base={"SEAM_CUDAGRAPH": "0", "PYTEST_ADDOPTS": "-x",
                                                                 "PYTHONPATH": "/elsewhere", "HOME": "/h"})
    assert env["SEAM_ARMS"] == "cuda" and env["A"] == "1" and env["HOME"] == "/h"
    assert "SEAM_CUDAGRAPH" not in env and "PYTEST_ADDOPTS" not in env
    assert env["PYTHONPATH"].split(":")[0] == str(tmp_path)


def test_the_pytest_command_line_has_no_fail_fast_and_loads_the_counting_plugin(tmp_path):
    argv = pytest_argv(Run("r", tmp_path, ("tests",)), tmp_path / "j.xml", tmp_path / "c.json")
    assert "--maxfail=0" in argv and "-x" not in argv
    plugins = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-p"]
    # The zygote first: it is forked before the reach plugin starts coverage.py (harness/zygote.py).
    assert plugins[0] == "harness.rows.pytest_zygote" and "harness.rows.pytest_counting" in plugins
    reaching = pytest_argv(Run("r", tmp_path, ("tests",), only=("tests/t.py::a",)), tmp_path / "j.xml", tmp_path / "c.json")
    assert [reaching[i + 1] for i, arg in enumerate(reaching) if arg == "-p"][:2] == \
        ["harness.rows.pytest_zygote", "harness.rows.pytest_reach"]
    assert "no:cacheprovider" in argv and "enable_assertion_pass_hook=true" not in argv  # opt-in: test_counting.py


def test_a_folder_an_earlier_invocation_left_is_kept_and_the_run_takes_the_next_number(tmp_path):
    # `seamgate run --output DIR` (or `sweep --output DIR`) a second time: the first run's logs stay.
    from tests.reports.fixture_projects import CALC, shared_server, write_project

    tree = write_project(tmp_path / "p", CALC)
    (tmp_path / "w" / "runs" / "0001-r").mkdir(parents=True)
    (tmp_path / "w" / "runs" / "0001-r" / "stdout.txt").write_text("the first invocation's log")
    outcome = Executor(shared_server(), tmp_path / "w").execute(Run("r", tree, ("tests",), timeout=60))
    assert outcome.end == "completed" and (tmp_path / "w" / "runs" / "0001-r" / "stdout.txt").read_text() == \
        "the first invocation's log"
    assert Path(outcome.log).parent.name == "0002-r"


def test_each_run_gets_its_share_of_the_cores_unless_the_user_set_the_thread_count(monkeypatch):
    from harness.rows.executor import THREAD_VARS, thread_environment, threads_per_run

    monkeypatch.setattr("os.sched_getaffinity", lambda _: {0, 1, 2, 3})
    assert [threads_per_run(jobs) for jobs in (1, 2, 3, 4, 8)] == [4, 2, 1, 1, 1]
    assert thread_environment(2, base={"HOME": "/h"}) == {var: "2" for var in THREAD_VARS}
    assert thread_environment(2, base={"OMP_NUM_THREADS": "3"}) == {}  # the user's choice stands
    assert thread_environment(None, base={}) == {}


THREADS = {"tests/test_threads.py": "import torch\n\n\ndef test_threads():\n    print('THREADS', torch.get_num_threads())\n"
                                    "    assert torch.get_num_threads() == 1\n"}


def test_a_forked_run_computes_with_its_share_of_threads_even_though_torch_was_imported_by_the_server(tmp_path, monkeypatch):
    # torch reads OMP_NUM_THREADS once, when the SERVER imports it: the child must be told again.
    pytest.importorskip("torch")
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    tree = write_project(tmp_path / "p", {**CALC, **THREADS})
    outcome = Executor(shared_server(), tmp_path / "w", threads=1).execute(Run("r", tree, ("tests/test_threads.py",),
                                                                               timeout=60))
    assert [(c.nodeid, c.kind) for c in outcome.cases] == [("tests/test_threads.py::test_threads", "passed")], \
        (Path(outcome.log).parent / "stdout.txt").read_text()
