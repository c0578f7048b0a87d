"""The fork server: one long-lived interpreter that has imported torch and pytest, forking a fresh
child per run.

Why: a process-wide switch (``SEAM_CUDAGRAPH``) is read once per process, so every run needs a
fresh process; a fresh interpreter pays ~3 s for ``import torch`` alone. A forked child of a
server that already imported torch and pytest pays only the fork and pytest's own session.

The invariant that makes a forked child as good as a fresh interpreter: the server imports NO
project module (no ``seam``, ``drivers``, ``harness`` or user code). It is started as
``python -I <this file>``, so neither the script's folder nor the current folder is on
``sys.path`` and ``PYTHONPATH`` is ignored; the child puts the materialized tree first on
``sys.path`` before pytest imports anything of the project, and a finder ahead of every installed
one resolves the project's top-level names (``claim``) in the copy only (``harness/rows/import_roots.py``). Torch itself is shared: environment
variables that torch reads at import time are read once, by the server.

This file is deliberately stdlib-only and imports nothing of ours, because it runs as a script.

Protocol: JSON lines. Client to server on the server's stdin::

    {"op": "run", "id": 7, "cwd": ..., "env": {...}, "path_front": [...], "path_back": [...], "claim": [...],
     "stdout": FILE, "stderr": FILE, "mode": "pytest", "argv": [...]}
    {"op": "run", ..., "mode": "call", "target": "pkg.mod:fn", "arg": "eager", "result": FILE}
    {"op": "modules", "id": 8}

Server to client on the server's stdout::

    {"event": "ready", "pid": 123}
    {"event": "started", "id": 7, "pid": 456}
    {"event": "exited", "id": 7, "status": 0}        # os.waitstatus_to_exitcode: <0 is a signal
    {"event": "modules", "id": 8, "modules": [...]}

Each child calls ``setsid()`` (so the client can kill its whole process group on a timeout) and
asks the kernel to SIGKILL it if the server dies. When the server's stdin closes (the client died,
even by SIGKILL) it kills every child's process group and exits.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

#: Modules the server imports before forking (the expensive, project-independent part).
#: ``torch._dynamo``: torch imports it lazily on the first call of a function it guards (a
#: ``TorchFunctionMode`` exit, which every capture makes), 0.6-0.9 s with sympy (``bench/bench_zygote.py``), in EVERY child that
#: captures; importing it initializes no CUDA (``scripts/device_fork_check.py``, on the H200).
#: ``configparser``, ``tomllib``: stdlib, imported in every run by the counting plugin's
#: ``harness/rows/import_roots.py`` (~3 ms a run otherwise: ``python -X importtime -c "import pytest, torch;
#: import harness.rows.import_roots"`` lists them).
PRELOAD: tuple[str, ...] = ("torch", "torch._dynamo", "pytest", "configparser", "tomllib")
#: The project's top-level module names, comma-separated, in the server's environment: the pytest11
#: plugins of those modules are never loaded by the server, even when installed into site-packages.
PROJECT_NAMES_ENV = "SEAMGATE_SERVER_PROJECT_NAMES"
#: Exit code of a child whose own setup (not pytest) raised.
CHILD_SETUP_FAILED = 70
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


# --------------------------------------------------------------------------------------------
# Child side (runs in the forked child, or in a fresh interpreter on the fallback path)
# --------------------------------------------------------------------------------------------

def _die_with_parent() -> None:
    """Ask Linux to SIGKILL us when our parent dies (best effort elsewhere)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _become_subreaper() -> bool:
    """Adopt our descendants when their parent dies (Linux ``PR_SET_CHILD_SUBREAPER``).

    A test that double-forks and calls ``setsid`` leaves a grandchild outside its run's process
    group; with a subreaper that grandchild is re-parented to us, not to init, so the run can find
    it and kill it (``_kill_descendants``).
    """
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process in ``/proc`` (empty where there is no ``/proc``)."""
    out = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            out[int(name)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    return out


def _descendants(root: int, parents: Mapping[int, int] | None = None) -> list[int]:
    """Every descendant of ``root``, from one reading of ``/proc`` (``parents``, read when not given)."""
    parents = _parents() if parents is None else parents
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def _kill_descendants(root: int, rounds: int = 50) -> None:
    """SIGKILL every descendant of ``root`` (a subreaper: orphans come back to it) and reap them.

    Repeats because a killed process's children are re-parented only after it dies.
    """
    import time

    for _ in range(rounds):
        pids = _descendants(root)
        if not pids:
            break
        for pid in pids:
            _sigkill(pid)
        _reap_any()
        time.sleep(0.01)
    _reap_any()


def _sigkill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reap_any() -> None:
    """Reap every exited child of this process without blocking."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _redirect(fd: int, path: str) -> None:
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(target, fd)
    os.close(target)


def _enter(request: Mapping[str, Any]) -> None:
    """Become the run: new session, output files, cwd, environment, ``sys.path``."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    _redirect(1, request["stdout"])
    _redirect(2, request["stderr"])
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    threads = os.environ.get("OMP_NUM_THREADS", "")
    if threads.isdigit() and int(threads) > 0 and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(int(threads))  # torch read the variable once, in the server
    front, back = list(request.get("path_front", ())), list(request.get("path_back", ()))
    sys.path[:] = front + [p for p in sys.path if p not in front and p not in back] + back
    if request.get("claim"):
        _claim(front, request["claim"])
    # Bytecode (and pytest's rewritten test modules) only where the caller says the tree is a copy
    # of ours: there it is kept and seeds the next copies (``harness/run/runner.py``); never in a user's tree.
    sys.dont_write_bytecode = not request.get("write_bytecode", False)
    importlib.invalidate_caches()


class _CopyFirst:
    """A meta-path finder that finds the project's top-level modules in the copy's roots ONLY.

    An editable install's import finder (setuptools' ``__editable__`` finders) or ``.pth`` line
    points at the ORIGINAL tree; this finder sits ahead of every path-based and installed finder
    (after the builtin and frozen importers), so ``import pkg`` resolves to the copy whatever else
    the environment holds. Submodules follow their parent's ``__path__``, which is the copy's.
    """

    def __init__(self, roots: list[str], names: list[str]) -> None:
        self.roots, self.names = roots, frozenset(names)

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if "." in name or name not in self.names:
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, self.roots)
        # A bare folder (namespace portion) yields to the normal search, as it would on sys.path.
        return spec if spec is not None and spec.loader is not None else None


def _claim(roots: list[str], names: list[str]) -> None:
    from importlib.machinery import BuiltinImporter, FrozenImporter

    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _CopyFirst)]
    at = 0
    while at < len(sys.meta_path) and sys.meta_path[at] in (BuiltinImporter, FrozenImporter):
        at += 1
    sys.meta_path.insert(at, _CopyFirst(roots, names))


def _act(request: Mapping[str, Any]) -> int:
    if request.get("mode", "pytest") == "pytest":
        import pytest

        return int(pytest.main(list(request["argv"])))
    module_name, _, attr = request["target"].partition(":")
    result = getattr(importlib.import_module(module_name), attr)(request.get("arg"))
    with open(request["result"], "w", encoding="utf-8") as fh:
        json.dump(result, fh, default=str)
    return 0


def child_main(request: Mapping[str, Any]) -> int:
    """Run one request in this process; the return value is the process's exit code."""
    try:
        _enter(request)
        code = _act(request)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - the child reports anything, then exits with a code
        traceback.print_exc()
        code = CHILD_SETUP_FAILED
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    return code


# --------------------------------------------------------------------------------------------
# Server side
# --------------------------------------------------------------------------------------------

class _Server:
    """The loop: read requests, fork children, report their exits, die cleanly on EOF."""

    def __init__(self, proto_in: int, proto_out: int) -> None:
        self.proto_in, self.proto_out = proto_in, proto_out
        self.children: dict[int, int] = {}  # pid -> request id
        self.buffer = b""
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)

    def send(self, message: Mapping[str, Any]) -> None:
        os.write(self.proto_out, (json.dumps(message) + "\n").encode())

    def serve(self) -> None:
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        # A run child killed on a timeout leaves its escaped descendants to us, not to init.
        _become_subreaper()
        self.send({"event": "ready", "pid": os.getpid()})
        while True:
            ready, _, _ = select.select([self.proto_in, self.wake_r], [], [], 1.0)
            if self.wake_r in ready:
                os.read(self.wake_r, 4096)
            self.reap()
            if self.proto_in in ready and not self.read_requests():
                break
        self.shutdown()

    def read_requests(self) -> bool:
        chunk = os.read(self.proto_in, 65536)
        if not chunk:
            return False
        self.buffer += chunk
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            if line.strip():
                self.handle(json.loads(line))
        return True

    def handle(self, request: Mapping[str, Any]) -> None:
        if request["op"] == "modules":
            self.send({"event": "modules", "id": request["id"], "modules": sorted(sys.modules)})
            return
        pid = os.fork()
        if pid == 0:
            self.become_child(request)
        self.children[pid] = request["id"]
        self.send({"event": "started", "id": request["id"], "pid": pid})

    def become_child(self, request: Mapping[str, Any]) -> None:
        code = CHILD_SETUP_FAILED
        try:
            os.setsid()
            _die_with_parent()
            _become_subreaper()
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
                signal.signal(sig, signal.SIG_DFL)
            for fd in (self.proto_in, self.proto_out, self.wake_r, self.wake_w):
                os.close(fd)
            # The preloaded heap stays frozen: pytest's unconfigure runs gc.collect() twice, and
            # walking torch's objects costs ~100 ms per collection.
            code = child_main(request)
        finally:
            try:
                _kill_descendants(os.getpid())  # what the run started and left behind goes with it
            finally:
                os._exit(code)  # never return into the server loop, whatever happened

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            request_id = self.children.pop(pid, None)
            if request_id is None:
                continue  # an adopted orphan of a finished run, reaped
            # The run is over; whatever it left in its process group (a test's forked child that
            # sleeps on) goes with it. The group id cannot be reused while members remain, and no
            # child is forked between the reap and this kill (one thread), so nothing else is hit.
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.kill_orphans()
            self.send({"event": "exited", "id": request_id, "status": os.waitstatus_to_exitcode(status)})

    def kill_orphans(self) -> None:
        """Kill our children that are no run: descendants of finished runs re-parented to us.

        A live run's descendants are re-parented to that run's child (a subreaper too), never to
        the server, so whatever the server adopts belongs to a run that has ended.
        """
        runs, parents = set(self.children), _parents()
        for pid, ppid in parents.items():
            if ppid == os.getpid() and pid not in runs:
                for victim in (*_descendants(pid, parents), pid):
                    _sigkill(victim)

    def shutdown(self) -> None:
        """The client is gone: no child may outlive us."""
        for pid in list(self.children):
            _kill_group(pid)
        for pid in list(self.children):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    _sigkill(pid)


def _preload(modules: list[str]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            if name == "pytest":
                raise
            # torch is optional: a project without it still gets a fork server

    if "pytest" in modules:
        # pytest imports its default plugins lazily, per session; do it once here instead.
        from _pytest.config import default_plugins

        for plugin in default_plugins:
            try:
                importlib.import_module(f"_pytest.{plugin}")
            except ImportError:
                pass
        # The warm-up session also loads the pytest11 plugins of installed distributions, through
        # pytest's own rewriting import (one imported any other way makes each run warn "Module
        # already imported so cannot be rewritten", an error under ``filterwarnings = error``); a
        # run then finds them imported. A plugin that is project code stays out (``_project_plugins``).
        _warm_pytest(_project_plugins())
        _warm_metadata()


def _project_plugins() -> list[str]:
    """The ``pytest11`` entry points the server must not load: those of an editable install, or whose
    module lies outside every site-packages folder of this interpreter (project code, imported fresh
    by each run from its own tree). Finding a top-level module imports nothing."""
    import importlib.metadata
    import sysconfig

    sites = {os.path.realpath(sysconfig.get_paths()[key]) for key in ("purelib", "platlib")}
    # The project's own top-level names, from the client (a project installed into site-packages too).
    project = {n for n in os.environ.get(PROJECT_NAMES_ENV, "").split(",") if n}
    blocked = []
    for dist in importlib.metadata.distributions():
        try:
            points = [ep for ep in dist.entry_points if ep.group == "pytest11"]
        except Exception:  # noqa: BLE001 - a broken dist-info is pytest's to report
            continue
        if not points:
            continue
        editable = _editable(dist)
        for ep in points:
            top = ep.value.split(":")[0].split(".")[0]
            if editable or top in project or not _installed(top, sites):
                blocked.append(ep.name)
    return blocked


def _editable(dist: Any) -> bool:
    try:
        return bool(json.loads(dist.read_text("direct_url.json") or "{}").get("dir_info", {}).get("editable"))
    except (ValueError, AttributeError):
        return False


def _installed(top: str, sites: set[str]) -> bool:
    """Whether the top-level module ``top`` is found inside a site-packages folder (not found: no)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    where = spec.origin if spec.origin not in (None, "namespace") else next(iter(spec.submodule_search_locations or ()), "")
    where = os.path.realpath(where or "")
    return any(where.startswith(site + os.sep) for site in sites)


def _warm_metadata() -> None:
    """Read every installed distribution's metadata once, so children inherit the directory caches.

    pytest scans all distributions twice per session (``pytest11`` entry points, and the plugin
    files to mark for assertion rewriting). ``importlib.metadata`` caches each path entry's listing
    in memory (keyed by its mtime): read here, a forked child finds it warm. Nothing is imported.
    """
    import importlib.metadata

    for dist in importlib.metadata.distributions():
        try:
            dist.entry_points, dist.files
        except Exception:  # noqa: BLE001 - a broken dist-info is pytest's to report, not ours
            continue


def _warm_pytest(blocked: list[str]) -> None:
    """Run one empty pytest session in the server so children inherit warm caches.

    Compiled regexes, ``functools`` caches, lazily imported pytest internals and the installed
    distributions' entry-point plugins then cost a child nothing. The session collects an empty
    temporary folder, with the entry points in ``blocked`` (project code) refused: no project code
    is imported.
    """
    import tempfile

    import pytest

    refused = [arg for name in blocked for arg in ("-p", f"no:{name}")]
    with tempfile.TemporaryDirectory(prefix="seamgate-warm-") as empty:
        cwd = os.getcwd()
        try:
            os.chdir(empty)
            pytest.main(["-q", "-p", "no:cacheprovider", *refused, "--junitxml", os.path.join(empty, "j.xml"),
                         "-o", "enable_assertion_pass_hook=true", "--rootdir", empty, empty])
        finally:
            os.chdir(cwd)


def server_main(preload: list[str]) -> None:
    # The protocol gets its own descriptors; fd 0/1 point elsewhere so a stray print (torch
    # warns on import at times) can never corrupt it.
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    _preload(preload)
    # The warm-up session's output ("no tests ran") sits in these buffers; flush it here, or
    # every forked child writes it into its own stdout file.
    sys.stdout.flush()
    sys.stderr.flush()
    gc.collect()
    gc.freeze()  # children share the preloaded heap copy-on-write; keep gc from touching it
    _Server(proto_in, proto_out).serve()


# --------------------------------------------------------------------------------------------
# Client side
# --------------------------------------------------------------------------------------------

@dataclass
class Handle:
    """One request in flight: its pid once started, its exit status once it exited."""

    id: int
    pid: int | None = None
    #: ``os.waitstatus_to_exitcode`` of the child: ``>= 0`` an exit code, ``< 0`` minus the signal.
    status: int | None = None
    started: threading.Event = field(default_factory=threading.Event)
    exited: threading.Event = field(default_factory=threading.Event)
    payload: dict[str, Any] = field(default_factory=dict)
    #: How to kill the whole process group of this run.
    killer: Callable[[], None] | None = None
    #: ``kill`` was called: a run whose pid had not come yet is killed as it comes (``ForkServer._dispatch``).
    kill_asked: bool = False

    def wait(self, timeout: float | None) -> bool:
        """Wait for the exit; False when ``timeout`` passed first (the run is still going)."""
        return self.exited.wait(timeout)

    def kill(self) -> None:
        # Asked first, the pid read after: the reader sets the pid first and reads the ask after, so one of the
        # two sees the other's write and the run is killed, however their threads interleave.
        self.kill_asked = True
        if self.killer is not None and not self.exited.is_set():
            self.killer()


class ServerDied(RuntimeError):
    """The fork server exited or broke its protocol."""


class ForkServer:
    """Client of one fork server process. Thread-safe: many runs may be in flight at once."""

    def __init__(self, preload: tuple[str, ...] = PRELOAD, python: str = sys.executable,
                 log: Path | None = None, project_names: tuple[str, ...] = ()) -> None:
        self.preload, self.python, self.log = preload, python, log
        #: The project's top-level modules: their pytest11 plugins are left to each run.
        self.project_names = tuple(project_names)
        self.process: subprocess.Popen[bytes] | None = None
        self.handles: dict[int, Handle] = {}
        self.lock = threading.Lock()
        self.next_id = 0
        self.ready = threading.Event()
        #: The server's stdout ended (it died); set before ``ready`` is released for waiters.
        self.ended = threading.Event()
        self.reader: threading.Thread | None = None

    def start(self, timeout: float = 180.0) -> ForkServer:
        log = open(self.log, "ab") if self.log else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen(
                [self.python, "-I", str(Path(__file__).resolve()), *self.preload],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                env={**os.environ, PROJECT_NAMES_ENV: ",".join(self.project_names)},
                start_new_session=True, close_fds=True,
            )
        finally:
            if log is not subprocess.DEVNULL:
                log.close()
        self.reader = threading.Thread(target=self._read, name="forkserver-reader", daemon=True)
        self.reader.start()
        if not self.ready.wait(timeout):
            self.close()
            raise ServerDied(f"fork server did not become ready within {timeout:.0f} s{self._log_tail()}")
        if self.ended.is_set() or self.process.poll() is not None:
            # Its output ended before (or instead of) "ready": it died starting, maybe not yet reaped.
            try:
                code = self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _kill_group(self.process.pid)
                code = self.process.wait()
            raise ServerDied(f"fork server exited at start with code {code}{self._log_tail()}")
        return self

    def _log_tail(self, limit: int = 2000) -> str:
        """``"; its log FILE says: ..."`` (the end of what the server wrote to stderr), or ``""``."""
        if self.log is None:
            return ""
        try:
            text = Path(self.log).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return f"; its log {self.log} could not be read"
        return f"; its log {self.log} says: {text[-limit:]}" if text else f"; its log {self.log} is empty"

    def __enter__(self) -> ForkServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def submit(self, request: dict[str, Any]) -> Handle:
        """Send a request; the returned handle's ``started`` fires with the child's pid."""
        with self.lock:
            self.next_id += 1
            handle = Handle(id=self.next_id)
            handle.killer = lambda: _kill_group(handle.pid) if handle.pid else None
            self.handles[handle.id] = handle
            self._write({**request, "op": request.get("op", "run"), "id": handle.id})
        return handle

    def modules(self, timeout: float = 30.0) -> list[str]:
        """The server's ``sys.modules`` keys right now (what every forked child starts with)."""
        handle = self.submit({"op": "modules"})
        if not handle.exited.wait(timeout):
            raise ServerDied("fork server did not answer a modules request")
        return list(handle.payload["modules"])

    def _write(self, message: Mapping[str, Any]) -> None:
        if self.process is None or self.process.stdin is None:
            raise ServerDied("fork server is not running")
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ServerDied(f"fork server is gone: {exc}") from exc

    def _read(self) -> None:
        stdout = self.process.stdout if self.process else None
        if stdout is None:
            return
        for line in stdout:
            self._dispatch(json.loads(line))
        # EOF: the server died; release everyone waiting so they can report a crash.
        self.ended.set()
        with self.lock:
            pending = [h for h in self.handles.values() if not h.exited.is_set()]
        for handle in pending:
            handle.status = handle.status if handle.status is not None else -signal.SIGKILL
            handle.payload.setdefault("server_died", True)
            handle.started.set()
            handle.exited.set()
        self.ready.set()

    def _dispatch(self, message: Mapping[str, Any]) -> None:
        event = message["event"]
        if event == "ready":
            self.ready.set()
            return
        with self.lock:
            handle = self.handles.get(message["id"])
        if handle is None:
            return
        if event == "started":
            handle.pid = int(message["pid"])
            handle.started.set()
            if handle.kill_asked:  # killed (kill_all, a timeout) before its pid came: that kill found none
                handle.kill()
            return
        handle.payload = dict(message)
        handle.status = message.get("status")
        handle.started.set()
        handle.exited.set()
        with self.lock:
            self.handles.pop(handle.id, None)

    def kill_all(self) -> None:
        """Kill every child in flight (their whole process groups)."""
        with self.lock:
            pending = list(self.handles.values())
        for handle in pending:
            handle.kill()

    def close(self) -> None:
        """Kill children in flight, then stop the server (it kills stragglers on EOF)."""
        self.kill_all()
        if self.process is None:
            return
        try:
            if self.process.stdin:
                self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _kill_group(self.process.pid)
            self.process.wait()


class FreshInterpreter:
    """The fallback (and the benchmark's comparison): a new interpreter per run, same protocol."""

    def __init__(self, python: str = sys.executable) -> None:
        self.python = python
        self.handles: dict[int, tuple[Handle, subprocess.Popen[bytes]]] = {}
        self.lock = threading.Lock()
        self.next_id = 0

    def start(self) -> FreshInterpreter:
        return self

    def __enter__(self) -> FreshInterpreter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def submit(self, request: dict[str, Any]) -> Handle:
        with self.lock:
            self.next_id += 1
            handle = Handle(id=self.next_id)
        proc = subprocess.Popen(
            [self.python, "-I", str(Path(__file__).resolve()), "--once", json.dumps(request)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=_die_with_parent,
        )
        handle.pid = proc.pid
        handle.killer = lambda: _kill_group(proc.pid)
        handle.started.set()
        with self.lock:
            self.handles[handle.id] = (handle, proc)
        threading.Thread(target=self._watch, args=(handle, proc), daemon=True).start()
        return handle

    def _watch(self, handle: Handle, proc: subprocess.Popen[bytes]) -> None:
        handle.status = proc.wait()
        handle.exited.set()
        with self.lock:
            self.handles.pop(handle.id, None)

    def kill_all(self) -> None:
        with self.lock:
            pending = [h for h, _ in self.handles.values()]
        for handle in pending:
            handle.kill()

    def close(self) -> None:
        self.kill_all()


def fork_available() -> bool:
    """Whether this platform can fork (and the user did not turn the fork server off)."""
    return hasattr(os, "fork") and os.environ.get("SEAMGATE_NO_FORK", "") not in ("1", "true")


def launcher(prefer_fork: bool = True, log: Path | None = None, project_names: tuple[str, ...] = (),
             torch: bool = True) -> ForkServer | FreshInterpreter:
    """A started launcher: the fork server where fork works, else a fresh interpreter per run.
    ``project_names``: the project's top-level modules, whose pytest11 plugins the server never loads;
    ``torch``: whether the project uses torch (``harness/rows/preload.py``): if not, the server does not import it."""
    if prefer_fork and fork_available():
        preload = PRELOAD if torch else tuple(m for m in PRELOAD if m.split(".")[0] != "torch")
        return ForkServer(preload=preload, log=log, project_names=project_names).start()
    return FreshInterpreter()


def _once(request_json: str) -> None:
    _become_subreaper()
    code = child_main(json.loads(request_json))
    try:
        _kill_descendants(os.getpid())
    finally:
        os._exit(code)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--once":
        _once(sys.argv[2])
    server_main([m for m in sys.argv[1:] if m])
