"""The fork server: children are fresh processes, and the server holds no project module."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.rows.executor import Executor, Run
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
    from harness.rows.executor import Call

    tree = write_project(tmp_path / "p", {"probe_mod.py": "import os\n\ndef f(arg):\n    return {'arg': arg, 'x': os.environ['X']}\n"})
    outcome = Executor(shared_server(), tmp_path / "w").call(Call("c", "probe_mod:f", "eager", tree, {"X": "7"}))
    assert outcome.result == {"arg": "eager", "x": "7"}
    assert "probe_mod" not in shared_server().modules()


ESCAPE = {
    **CALC,
    "tests/test_escape.py": (
        "import os, sys, time\n\n\n"
        "def test_a_grandchild_in_its_own_session_outlives_the_test():\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os.setsid()\n"
        "        if os.fork() == 0:\n"
        "            with open(os.environ['PIDFILE'] + '.tmp', 'w') as fh:\n"
        "                fh.write(str(os.getpid()))\n"
        "            os.rename(os.environ['PIDFILE'] + '.tmp', os.environ['PIDFILE'])\n"
        "            time.sleep(300)\n"
        "        os._exit(0)\n"
        "    os.waitpid(pid, 0)\n"
        "    while not os.path.exists(os.environ['PIDFILE']):\n"
        "        time.sleep(0.01)\n"
    ),
}


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    import os

    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        return os.path.exists(f"/proc/{pid}")


@pytest.mark.parametrize("launcher", ["fork server", "fresh interpreter"])
def test_a_double_forked_grandchild_in_its_own_session_is_gone_when_the_run_ends(tmp_path, launcher):
    import time

    from harness.rows.forkserver import FreshInterpreter

    tree = write_project(tmp_path / "p", ESCAPE)
    pidfile = tmp_path / "grandchild.pid"
    server = shared_server() if launcher == "fork server" else FreshInterpreter()
    run = Executor(server, tmp_path / "w").execute(Run("r", tree, ("tests/test_escape.py",),
                                                       env={"PIDFILE": str(pidfile)}, timeout=60))
    assert [c.kind for c in run.cases] == ["passed"]
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild), f"pid {grandchild} outlived its run"


def test_a_server_that_dies_while_starting_is_an_error_that_quotes_its_log(tmp_path):
    import os

    from harness.rows.forkserver import ForkServer, ServerDied

    python = tmp_path / "python"  # an interpreter whose preload fails at once, as a broken torch would
    python.write_text("#!/bin/sh\necho 'ImportError: libcuda.so.1: cannot open shared object file' >&2\nexit 3\n")
    os.chmod(python, 0o755)
    log = tmp_path / "forkserver.log"
    for _ in range(4):  # it used to return a dead server some of the time
        with pytest.raises(ServerDied) as caught:
            ForkServer(python=str(python), log=log).start(timeout=60)
        assert "exited at start with code 3" in str(caught.value)
        assert "libcuda.so.1: cannot open shared object file" in str(caught.value) and str(log) in str(caught.value)


def test_seamgate_run_with_a_fork_server_that_cannot_start_exits_environment_quoting_its_kept_log(
        tmp_path, monkeypatch, capsys):
    import os

    import harness.run.runner
    from harness.cli.main import main
    from harness.exit_codes import ExitCode
    from harness.rows.forkserver import ForkServer

    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'ImportError: libcuda.so.1: cannot open shared object file' >&2\nexit 3\n")
    os.chmod(python, 0o755)
    monkeypatch.setattr(harness.run.runner, "start_launcher",
                        lambda prefer_fork, log, project_names=(), torch=True: ForkServer(python=str(python), log=log).start(timeout=60))
    from tests.harness.test_cli_plan import FILES

    project = write_project(tmp_path / "p", FILES)
    code = main(["--project", str(project), "run", "--no-reuse"])
    err = capsys.readouterr().err
    assert code == ExitCode.ENVIRONMENT, err
    assert "fork server" in err and "libcuda.so.1: cannot open shared object file" in err and "Traceback" not in err
    [log] = (project / ".seamgate" / "runs").glob("*/forkserver.log")
    assert "libcuda.so.1" in log.read_text()
