"""A zygote for a test's "fresh interpreter" children: ``python -c``/``-m`` forked with torch loaded.

Tests of process-wide switches (``SEAM_CUDAGRAPH`` is read once per process) start a fresh
interpreter per setting, and each pays ``import torch`` (~1.3 s on a 2-core machine) for a probe
that computes for milliseconds. ``run_python(args, env=..., cwd=..., timeout=...)`` and
``start_python`` take the place of ``subprocess.run([sys.executable, *args], ...)``: when this
process has a zygote (``harness/rows/pytest_zygote.py``, loaded by ``seamgate``'s runs before any project
module is imported), the child is forked from it (~40 ms), else started as a real interpreter.

What a forked child shares with its zygote, and so differs from a fresh interpreter in:
- the modules the zygote had imported (torch, pytest, the standard library), imported ONCE, with the
  environment of that moment: a request whose environment changes a variable such modules read at
  import (``IMPORT_TIME_PREFIXES``: ``TORCH*``, ``CUDA*``, ``OMP_*``, ``PYTHON*`` but
  ``PYTHONPATH``, ...) is refused, and runs in a real interpreter instead;
- the interpreter's flags (``-I``, ``-O``, ...): a request with options before ``-c``/``-m`` runs in a
  real interpreter;
- ``PYTHONHASHSEED``'s hash seed, and the import finders the zygote had (in a seamgate run, the one
  that resolves the project in the run's copy of the tree).
No project module is shared: the zygote is born before the project is imported, and a child drops
``harness.*`` (the zygote's own module) from ``sys.modules``. Each child gets its own session-less
process in the caller's process group, ``/dev/null`` as stdin, fresh ``sys.std*`` on its own output
files, the default signal handlers, the caller's environment (or ``env``), ``sys.path`` as
``python`` builds it (``''`` or the cwd, then ``PYTHONPATH``), the start-up hook (``sitecustomize``) its
``PYTHONPATH`` holds, run as ``site`` runs it (``seam.emulate_cuda()``'s children are emulated through
one), ``sys.argv``, a fresh ``__main__``,
and ``coverage.py``'s start-up hook when ``COVERAGE_PROCESS_START`` names a config, which is how
``harness/rows/pytest_reach.py`` measures what a child reached (every child is counted there as a Python
child of the running case: one whose data never arrives leaves that case's reach unknown).

This module imports only the standard library, and ``harness/rows/forkserver.py``'s process helpers
(stdlib-only too) where it kills or becomes a process: never at import, which every run pays
(``harness/rows/pytest_zygote.py``). Nothing of the project under test.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

#: Variables read at import by the modules a zygote holds (torch, its OpenMP and CUDA, Python
#: itself): a request that sets one of them to another value than the zygote saw runs in a real
#: interpreter. ``PYTHONPATH`` is applied by the child itself.
IMPORT_TIME_PREFIXES = ("TORCH", "PYTORCH", "CUDA", "CUBLAS", "CUDNN", "NCCL", "NVIDIA", "HIP", "ROCM",
                        "OMP_", "GOMP", "KMP_", "MKL", "OPENBLAS", "LD_", "MALLOC", "PYTHON")
_APPLIED_BY_CHILD = frozenset({"PYTHONPATH", "COVERAGE_PROCESS_START"})
#: ``SEAMGATE_ZYGOTE=0`` in a run's environment: no zygote (``harness/rows/pytest_zygote.py``).
ENV = "SEAMGATE_ZYGOTE"
#: The modules a run's zygote imports before its first child, comma-separated (``""``: none; unset: torch and
#: ``torch._dynamo``), less those already imported: the executor sets it empty for a project without torch.
PRELOAD_ENV = "SEAMGATE_ZYGOTE_PRELOAD"
#: What a zygote imports when ``PRELOAD_ENV`` is unset.
TORCH_PRELOAD = ("torch", "torch._dynamo")
#: The largest request a zygote takes in one message (the rest run in a real interpreter).
MAX_REQUEST = 200_000


@dataclass
class _Started:
    """One child: its pid, and the pipe on which its zygote reports its exit status."""

    pid: int
    status: int  # read end
    stdout: Any
    stderr: Any


class Zygote:
    """The caller's end of a zygote forked from this process (``Zygote.fork()``)."""

    def __init__(self, sock: socket.socket, pid: int, owner: int, birth_env: Mapping[str, str]) -> None:
        self.sock, self.pid, self.owner, self.birth_env = sock, pid, owner, dict(birth_env)

    @classmethod
    def fork(cls, preload: Sequence[str] = ()) -> Zygote | None:
        """Fork a zygote from this process now (``None`` where ``os.fork`` or AF_UNIX is missing);
        it imports ``preload`` (where importable) before it takes the first request."""
        if not hasattr(os, "fork") or not hasattr(socket, "send_fds"):
            return None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the zygote
            ours.close()
            code = 1
            try:
                code = _serve(theirs, preload)
            finally:
                os._exit(code)
        theirs.close()
        return cls(ours, pid, os.getpid(), os.environ)

    def close(self, grace: float = 2.0) -> None:
        """End the zygote (its unfinished children with it) and reap it, in the process that forked it.

        Said, not left to the end of the file: a test's forked child that still sleeps holds a copy
        of the socket, so the zygote would never read its end. Killed after ``grace`` seconds."""
        import time

        try:
            self.sock.send(b'{"op": "exit"}')
        except OSError:
            pass
        self.sock.close()
        if os.getpid() != self.owner:
            return
        deadline = time.monotonic() + grace
        try:
            while not os.waitpid(self.pid, os.WNOHANG)[0]:
                if time.monotonic() > deadline:
                    # stdlib-only, but never at import: every run's zygote plugin imports this module (docstring)
                    from harness.rows.forkserver import _sigkill

                    _sigkill(self.pid)
                time.sleep(0.002)
        except ChildProcessError:
            pass

    def refuses(self, args: Sequence[str], env: Mapping[str, str]) -> str | None:
        """Why this request must run in a real interpreter (``None``: the zygote can take it)."""
        if not args or args[0] not in ("-c", "-m") or len(args) < 2:
            return "only `-c CODE` and `-m MODULE` requests, with no interpreter options before them"
        for key in set(env) | set(self.birth_env):
            if key.startswith(IMPORT_TIME_PREFIXES) and key not in _APPLIED_BY_CHILD \
                    and env.get(key) != self.birth_env.get(key):
                return f"{key} differs from the zygote's, and is read at import"
        return None

    def start(self, args: Sequence[str], env: Mapping[str, str], cwd: str) -> _Started:
        """Ask the zygote for a child; raises ``OSError`` when the zygote is gone."""
        # A signal the caller ignores stays ignored across exec, so a real child would inherit it.
        ignored = [int(sig) for sig in _RESET if _ignored(sig)]
        request = json.dumps({"args": list(args), "env": dict(env), "cwd": cwd, "ignored": ignored}).encode()
        if len(request) > MAX_REQUEST:
            raise OSError(f"request of {len(request)} bytes is over {MAX_REQUEST}")
        out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        status_r, status_w = os.pipe()
        try:
            socket.send_fds(self.sock, [request], [out.fileno(), err.fileno(), status_w])
        except OSError:
            os.close(status_r)
            out.close()
            err.close()
            raise
        finally:
            os.close(status_w)
        line = _read_line(status_r, None)
        if not line:
            os.close(status_r)
            out.close()
            err.close()
            raise OSError("the zygote did not start the child")
        return _Started(int(line), status_r, out, err)


class ChildProcess:
    """A started child (from a zygote or a real interpreter), read like ``subprocess.Popen``."""

    def __init__(self, args: Sequence[str], env: Mapping[str, str], cwd: str, zygote: Zygote | None) -> None:
        self.args = [sys.executable, *args]
        self.forked = zygote is not None
        self._popen: subprocess.Popen[bytes] | None = None
        self._started: _Started | None = None
        if zygote is not None:
            self._started = zygote.start(args, env, cwd)
            self.pid = self._started.pid
        else:
            self._popen = subprocess.Popen(self.args, env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.pid = self._popen.pid

    def communicate(self, timeout: float | None = None, text: bool = True) -> subprocess.CompletedProcess[Any]:
        """Wait for the child; its exit code and output. On ``timeout`` the child is killed and
        ``subprocess.TimeoutExpired`` raised, as ``subprocess.run`` does."""
        if self._popen is not None:
            try:
                out, err = self._popen.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._popen.kill()
                out, err = self._popen.communicate()
                raise subprocess.TimeoutExpired(self.args, timeout or 0, _text(out, text), _text(err, text)) from None
            return subprocess.CompletedProcess(self.args, self._popen.returncode, _text(out, text), _text(err, text))
        started = self._started
        assert started is not None
        line = _read_line(started.status, timeout)
        timed_out = line is None
        if timed_out:
            # stdlib-only, but never at import: every run's zygote plugin imports this module (docstring)
            from harness.rows.forkserver import _sigkill

            _sigkill(started.pid)
            line = _read_line(started.status, None)
        os.close(started.status)
        out, err = _slurp(started.stdout), _slurp(started.stderr)
        if timed_out:
            raise subprocess.TimeoutExpired(self.args, timeout or 0, _text(out, text), _text(err, text))
        code = os.waitstatus_to_exitcode(int(line)) if line else -signal.SIGKILL
        return subprocess.CompletedProcess(self.args, code, _text(out, text), _text(err, text))


#: The zygote of this process, when ``harness/rows/pytest_zygote.py`` forked one.
ZYGOTE: Zygote | None = None


def start_python(args: Sequence[str], env: Mapping[str, str] | None = None,
                 cwd: str | os.PathLike[str] | None = None) -> ChildProcess:
    """Start ``python ARGS`` (``-c CODE ...`` or ``-m MODULE ...``): forked from this process's zygote
    when it has one and can take the request, else a real interpreter. ``env=None``: this process's."""
    env = dict(os.environ if env is None else env)
    cwd = os.fspath(cwd) if cwd is not None else os.getcwd()
    zygote = ZYGOTE if ZYGOTE is not None and ZYGOTE.refuses(args, env) is None else None
    if zygote is not None:
        env = _counted(env)
        try:
            return ChildProcess(args, env, cwd, zygote)
        except OSError:
            pass  # the zygote is gone: a real interpreter (counted again where it starts)
    return ChildProcess(args, env, cwd, None)


def run_python(args: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None,
               timeout: float | None = None, text: bool = True) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=text,
    timeout=timeout)``, with the child forked from the zygote where there is one (``start_python``)."""
    return start_python(args, env, cwd).communicate(timeout, text)


def _counted(env: dict[str, str]) -> dict[str, str]:
    """Tell the reach recorder (when this run records reach) that the running case starts a Python
    child; the environment it returns makes coverage.py measure that child."""
    recorder = sys.modules.get(f"{__package__}.rows.pytest_reach")  # loaded under the same name as this module
    note = getattr(recorder, "python_child", None)
    return note(env, __file__) if note is not None else env


def _text(data: bytes | None, text: bool) -> Any:
    if data is None or not text:
        return data
    return data.decode().replace("\r\n", "\n").replace("\r", "\n")


def _slurp(handle: Any) -> bytes:
    handle.seek(0)
    data = handle.read()
    handle.close()
    return data


def _read_line(fd: int, timeout: float | None) -> str | None:
    """One line from ``fd`` ('' at end of file), or ``None`` when ``timeout`` passed first."""
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    data = b""
    while not data.endswith(b"\n"):
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            return None
        chunk = os.read(fd, 1)
        if not chunk:
            return data.decode()
        data += chunk
    return data.decode()


# --------------------------------------------------------------------------------------------
# The zygote's side
# --------------------------------------------------------------------------------------------

#: The signals a child's handlers are reset for (as ``exec`` resets them).
_RESET = (signal.SIGINT, signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def _ignored(sig: signal.Signals) -> bool:
    try:
        return signal.getsignal(sig) == signal.SIG_IGN
    except ValueError:  # not a signal of this platform
        return False


def _serve(sock: socket.socket, preload: Sequence[str]) -> int:
    """Fork a child per request until the caller closes its end; report each child's exit status."""
    import atexit
    import importlib

    # stdlib-only, but never at import: every run's zygote plugin imports this module (docstring)
    from .rows.forkserver import _die_with_parent, _sigkill

    _die_with_parent()
    atexit._clear()  # the caller's handlers are not ours to run
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the caller's to handle
    for name in preload:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    statuses: dict[int, int] = {}
    while True:
        ready, _, _ = select.select([sock, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
        _reap(statuses)
        if sock not in ready:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(sock, MAX_REQUEST + 1, 3)
        except InterruptedError:
            continue
        if not message or not fds:  # the caller is gone or says so ({"op": "exit"}): so are its children
            for fd in fds:
                os.close(fd)
            for pid in statuses:
                _sigkill(pid)
            return 0
        out, err, status = fds
        pid = os.fork()
        if pid == 0:
            sock.close()
            os.close(wake_r)
            os.close(wake_w)
            os.close(status)
            _child(json.loads(message), out, err)  # never returns
        os.close(out)
        os.close(err)
        os.write(status, f"{pid}\n".encode())
        statuses[pid] = status


def _reap(statuses: dict[int, int]) -> None:
    while statuses:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        fd = statuses.pop(pid, None)
        if fd is not None:
            try:
                os.write(fd, f"{status}\n".encode())
            except OSError:
                pass
            os.close(fd)


def _child(request: Mapping[str, Any], out: int, err: int) -> None:
    """Become ``python ARGS`` as a fresh interpreter would, run it, and exit with its code."""
    import atexit
    import io
    import types

    # stdlib-only, but never at import: every run's zygote plugin imports this module (docstring)
    from .rows.forkserver import _die_with_parent

    code = 1
    try:
        _die_with_parent()
        signal.set_wakeup_fd(-1)
        # As exec leaves them: what the caller ignores stays ignored, every other handler is the
        # default; then as Python sets them at start-up: SIGINT raises KeyboardInterrupt unless
        # ignored, SIGPIPE is ignored.
        ignored = set(request.get("ignored", ()))
        for sig in _RESET:
            signal.signal(sig, signal.SIG_IGN if int(sig) in ignored else signal.SIG_DFL)
        if int(signal.SIGINT) not in ignored:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        devnull = os.open(os.devnull, os.O_RDONLY)
        for source, target in ((devnull, 0), (out, 1), (err, 2)):
            os.dup2(source, target)
            os.close(source)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)))
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True,
                                      errors="backslashreplace")
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
        args, env = list(request["args"]), request["env"]
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(env)
        for name in [m for m in sys.modules if m == __package__ or m.startswith(f"{__package__}.")]:
            del sys.modules[name]
        first = "" if args[0] == "-c" else os.getcwd()
        front = [first, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
        sys.path[:] = front + [p for p in sys.path if p not in front]
        import importlib
        import random

        importlib.invalidate_caches()
        random.seed()
        _start_up_hook(front[1:])
        if env.get("COVERAGE_PROCESS_START"):
            try:
                import coverage

                coverage.process_startup()
            except ImportError:
                pass
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        if args[0] == "-c":
            sys.argv = ["-c", *args[2:]]
            exec(compile(args[1], "<string>", "exec"), main.__dict__)
        else:
            import runpy

            sys.argv = [args[1], *args[2:]]  # runpy puts the module's path in argv[0]
            runpy._run_module_as_main(args[1], alter_argv=True)  # what `python -m` calls
        code = 0
    except SystemExit as stop:
        code = _exit_code(stop.code)
    except BaseException:  # noqa: BLE001 - printed as the interpreter prints it
        kind, value, trace = sys.exc_info()
        user = trace.tb_next if trace is not None else None  # from the user's frame on, as python prints it
        sys.excepthook(kind, value.with_traceback(user) if value is not None else value, user)
        code = 1
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _start_up_hook(pythonpath: Sequence[str]) -> None:
    """Run the ``sitecustomize`` a fresh interpreter would run at start-up, where the request's
    ``PYTHONPATH`` holds one that is not the one this zygote ran (site-packages' own, if any, the zygote
    ran already, and the child keeps it). ``seam.emulate_cuda()`` makes its children emulated through
    such a hook (``seam/torch_cuda/autostart/sitecustomize.py``): without this a forked child kept
    ``SEAM_EMULATE_CUDA=1`` and ran on the real ``torch.cuda``. An error in it is printed as ``site``
    prints it, and the program runs on."""
    import importlib.machinery
    import importlib.util

    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", list(pythonpath))
    if spec is None or spec.loader is None or spec.origin is None:
        return
    ran = getattr(sys.modules.get("sitecustomize"), "__file__", None)
    if ran is not None and os.path.abspath(ran) == os.path.abspath(spec.origin):
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # noqa: BLE001 - as site.execsitecustomize reports it
        print(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{type(err).__name__}: {err}",
              file=sys.stderr)


def _exit_code(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1
