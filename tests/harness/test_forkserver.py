"""The fork server: children are fresh processes, and the server holds no project module."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.executor import Executor, Run
from tests.reports.fixture_projects import CALC, shared_server, write_project

PROJECT_TOP_LEVEL = {"seam", "drivers", "harness", "reports", "mutations", "calc", "tests", "conftest"}

SWITCH = {
    **CALC,
    "calc/switch.py": "import os\n\nENABLED = os.environ.get('CALC_SWITCH', '1') != '0'\n",
    "tests/test_switch.py": (
        "import os\nfrom calc import switch\n\n\n"
        "def test_switch_read_once_matches_this_runs_environment():\n"
        "    assert switch.ENABLED == (os.environ['WANT'] == 'on')\n"
    ),
}


def project_modules(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in PROJECT_TOP_LEVEL]


def test_the_fork_server_holds_no_project_module_before_or_after_runs(tmp_path):
    server = shared_server()
    assert project_modules(server.modules()) == []
    tree = write_project(tmp_path / "p", SWITCH)
    Executor(server, tmp_path / "w").execute(Run("r", tree, ("tests",), env={"WANT": "on"}, timeout=60))
    modules = server.modules()
    assert project_modules(modules) == [] and "torch" in modules and "pytest" in modules


def test_two_runs_in_sequence_each_read_their_own_switch(tmp_path):
    tree = write_project(tmp_path / "p", SWITCH)
    executor = Executor(shared_server(), tmp_path / "w")
    first = executor.execute(Run("on", tree, ("tests/test_switch.py",), env={"CALC_SWITCH": "1", "WANT": "on"}, timeout=60))
    second = executor.execute(Run("off", tree, ("tests/test_switch.py",), env={"CALC_SWITCH": "0", "WANT": "off"}, timeout=60))
    assert [c.kind for c in first.cases] == ["passed"] and [c.kind for c in second.cases] == ["passed"]


@pytest.mark.slow
def test_the_switch_test_can_fail_two_sessions_in_one_process_see_a_stale_switch(tmp_path):
    # The control for the test above: without a fresh process the second session reads the
    # first session's switch, so the switch test is not decoration.
    tree = write_project(tmp_path / "p", SWITCH)
    script = (
        "import os, pytest\n"
        "os.environ.update(CALC_SWITCH='1', WANT='on'); a = pytest.main(['-q', '-p', 'no:cacheprovider', 'tests/test_switch.py'])\n"
        "os.environ.update(CALC_SWITCH='0', WANT='off'); b = pytest.main(['-q', '-p', 'no:cacheprovider', 'tests/test_switch.py'])\n"
        "print('CODES', int(a), int(b))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=tree, capture_output=True, text=True,
                         env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1",
                              "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert "CODES 0 1" in out.stdout


def test_a_call_runs_a_callable_in_a_child_and_returns_its_json(tmp_path):
    from harness.executor import Call

    tree = write_project(tmp_path / "p", {"probe_mod.py": "import os\n\ndef f(arg):\n    return {'arg': arg, 'x': os.environ['X']}\n"})
    outcome = Executor(shared_server(), tmp_path / "w").call(Call("c", "probe_mod:f", "eager", tree, {"X": "7"}))
    assert outcome.result == {"arg": "eager", "x": "7"}
    assert "probe_mod" not in shared_server().modules()
