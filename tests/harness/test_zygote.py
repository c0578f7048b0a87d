"""A child forked from a zygote (``harness/zygote.py``) behaves as the fresh interpreter it replaces.

Each program runs twice, in a fresh driver interpreter: once with a zygote (every child forked from
it, which the test checks) and once without (every child a real ``python``). What a test of a switch
reads of its child must be the same: exit code, stdout, stderr, argv, ``__name__``, ``sys.path[0]``,
the cwd, the environment, the signal handlers, stdin, atexit handlers, and no module of the caller.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROGRAMS = {
    "exit code and both streams": ["-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"],
    "an uncaught exception": ["-c", "x = 1\nraise ValueError('boom')"],
    "sys.exit with a message": ["-c", "import sys; sys.exit('stopped here')"],
    "argv, name, path, cwd, environment": [
        "-c", "import json, os, sys; print(json.dumps([sys.argv, __name__, sys.path[0], os.getcwd(), "
              "os.environ.get('ZYGOTE_T'), 'ZYGOTE_GONE' in os.environ]))", "x", "y"],
    "a module run with -m": ["-m", "zmod", "a", "b"],
    "no module of the caller": ["-c", "import sys; print(sorted(m for m in sys.modules if m.split('.')[0] in "
                                      "('harness', 'zmod', 'seam', 'drivers')))"],
    "signals and stdin as python sets them": [
        "-c", "import signal, sys; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, "
              "signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, signal.getsignal(signal.SIGCHLD) == signal.SIG_DFL, "
              "repr(sys.stdin.read()))"],
    "atexit handlers and unflushed output": ["-c", "import atexit; atexit.register(print, 'bye'); print('a', end='')"],
    "a syntax error": ["-c", "def ("],
    "the start-up hook on PYTHONPATH has run": [
        "-c", "import sys; print(getattr(sys.modules.get('sitecustomize'), 'MARK', None))"],
}
#: A start-up hook (``sitecustomize``) in the children's ``PYTHONPATH`` folder: a fresh interpreter runs it
#: before the program (``seam.emulate_cuda()``'s children are emulated through one), so a forked child must.
SITECUSTOMIZE = "MARK = 'ran at start-up'\n"

DRIVER = """
import json, os, signal, subprocess, sys
from harness import zygote
signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever the test's own runner ignores
if sys.argv[1] == "forked":
    zygote.ZYGOTE = zygote.Zygote.fork()
programs, cwd = json.loads(sys.argv[2]), sys.argv[3]
env = {k: v for k, v in os.environ.items() if k != "ZYGOTE_GONE"}
env.update({"ZYGOTE_T": "set", "PYTHONPATH": cwd})
out = {}
for name, args in programs.items():
    child = zygote.start_python(args, env=env, cwd=cwd)
    done = child.communicate(timeout=60)
    out[name] = [done.returncode, done.stdout, done.stderr, child.forked]
for name, args, extra in (("options before -c", ["-I", "-c", "print(1)"], {}),
                          ("an import-time variable changed", ["-c", "print(1)"], {"OMP_NUM_THREADS": "7"})):
    child = zygote.start_python(args, env={**env, **extra}, cwd=cwd)
    out[name] = [child.communicate(timeout=60).returncode, child.forked]
signal.signal(signal.SIGINT, signal.SIG_IGN)  # a caller that ignores SIGINT (a background job)
child = zygote.start_python(["-c", "import signal; print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)"], env=env, cwd=cwd)
out["with SIGINT ignored by the caller"] = [child.communicate(timeout=60).stdout, child.forked]
signal.signal(signal.SIGINT, signal.default_int_handler)
read, write = os.pipe()
if os.fork() == 0:  # a forked process (a sweep's mutant child) asks the same zygote
    child = zygote.start_python(["-c", "print(5)"], env=env, cwd=cwd)
    os.write(write, json.dumps([child.communicate(timeout=60).stdout, child.forked]).encode())
    os._exit(0)
os.close(write)
out["from a forked process"] = json.loads(os.read(read, 4096))
try:
    zygote.run_python(["-c", "import time; print('started', flush=True); time.sleep(30)"], env=env, cwd=cwd, timeout=1)
except subprocess.TimeoutExpired as stop:
    out["timeout"] = [str(stop), stop.output]
print(json.dumps(out))
"""


def drive(mode: str, tmp_path: Path) -> dict:
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    (tmp_path / "zmod.py").write_text("import sys\nprint(sys.argv[0].endswith('zmod.py'), sys.argv[1:], __name__)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ZYGOTE_GONE": "1"}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(DRIVER), mode, json.dumps(PROGRAMS), str(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    folder = tmp_path_factory.mktemp("zygote")
    return drive("real", folder), drive("forked", folder)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_forked_child_gives_what_a_fresh_interpreter_gives(both: tuple[dict, dict], name: str) -> None:
    real, forked = both
    assert real[name][3] is False and forked[name][3] is True  # the second really came from the zygote
    assert forked[name][:3] == real[name][:3]


def test_the_programs_show_what_they_claim(both: tuple[dict, dict], tmp_path_factory: pytest.TempPathFactory) -> None:
    real, _ = both
    assert real["exit code and both streams"][:3] == [3, "out\n", "err\n"]
    assert real["an uncaught exception"][2].endswith("ValueError: boom\n") and real["an uncaught exception"][0] == 1
    argv, name, first, cwd, seen, gone = json.loads(real["argv, name, path, cwd, environment"][1])
    assert (argv, name, first, seen, gone) == (["-c", "x", "y"], "__main__", "", "set", False)
    assert real["a module run with -m"][1] == "True ['a', 'b'] __main__\n"
    assert real["no module of the caller"][1] == "[]\n"
    assert real["signals and stdin as python sets them"][1] == "True True True ''\n"
    assert real["atexit handlers and unflushed output"][1] == "abye\n"
    assert real["sys.exit with a message"][:3] == [1, "", "stopped here\n"]
    assert real["the start-up hook on PYTHONPATH has run"][1] == "ran at start-up\n"


def test_a_request_the_zygote_cannot_honour_runs_in_a_real_interpreter(both: tuple[dict, dict]) -> None:
    _, forked = both
    assert forked["options before -c"] == [0, False]
    assert forked["an import-time variable changed"] == [0, False]


def test_a_signal_the_caller_ignores_stays_ignored_in_the_child_as_across_exec(both: tuple[dict, dict]) -> None:
    real, forked = both
    assert real["with SIGINT ignored by the caller"] == ["True\n", False]
    assert forked["with SIGINT ignored by the caller"] == ["True\n", True]


def test_a_process_forked_from_the_caller_gets_its_children_from_the_same_zygote(both: tuple[dict, dict]) -> None:
    real, forked = both
    assert real["from a forked process"] == ["5\n", False] and forked["from a forked process"] == ["5\n", True]


def test_a_child_past_its_timeout_is_killed_and_reported_as_subprocess_does(both: tuple[dict, dict]) -> None:
    real, forked = both
    assert "timed out after 1 seconds" in real["timeout"][0]
    assert forked["timeout"] == real["timeout"]
