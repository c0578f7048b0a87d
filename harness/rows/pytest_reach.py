"""The reach plugin: which project lines each test case executes, and which cases a run keeps.

Loaded with ``-p harness.rows.pytest_reach`` (first among the ``-p`` plugins) and driven by two
environment variables, so that it can act before pytest reads its options:

- ``SEAMGATE_REACH_OUT=FILE``: measure. coverage.py (``Coverage(data_file=None)``, the C tracer on
  Python 3.11, which has no ``sys.monitoring``) starts when this module is imported, i.e. before
  the entry-point plugins, the conftests and the project are imported; every case runs under its
  own dynamic context (its node id, through setup, call and teardown), and a fixture of a scope
  wider than a function runs under ``fixture:NAME`` (its lines then reach every case that uses it,
  not only the first). Lines run at import or collection have the empty context. A case that
  starts a child process (``_posixsubprocess.fork_exec``, which ``subprocess`` and
  multiprocessing use; ``os.fork``, ``os.posix_spawn``, ``os.system``) has its Python children
  measured through coverage.py's ``.pth`` hook (``COVERAGE_PROCESS_START`` is put back into a child
  environment the case cleared); only the lines a child ran inside function bodies count as its
  reach (its import-time lines are the parent's too). A case with a child that is not this
  interpreter, or whose data never arrived, is listed as ``spawned``: its reach is unknown. The project functions on the stack at that moment are kept
  as ``spawn_regions``: a case that runs any of them later may be reading the child's result from
  a cache (``functools.cache`` over a child probe), so its reach is unknown too. The project files
  that are not Python which a context OPENS (a test's data, read or written, wherever it lies in the
  tree: ``evidence/*.json``, ``docs/x.md``) and the project folders a case or fixture LISTS (``glob``,
  ``os.scandir``, ``os.listdir``; not the import system's own listings, nor any at import or collection
  time, where a new file can only add new cases) come from a ``sys.audit`` hook (events ``open``,
  ``os.listdir``, ``os.scandir``), with the project functions on the stack at each open
  (``open_regions``: a case running one of them later may read the file's content from a cache). The
  JSON written at session finish: ``{"root", "files": {rel: {context: [lines]}}, "fixtures": {nodeid:
  [names]}, "spawned": [nodeids], "spawn_regions": [[rel, first, last]], "opened": {context: [rel or
  folder/]}, "open_regions": [[rel, first, last, context]], "cases": [nodeids]}``.
- ``SEAMGATE_ONLY=FILE``: keep. A JSON list of node ids; every collected item not in it is
  deselected. ``SEAMGATE_SKIP=FILE``: the opposite, every item in it is deselected (the cells a
  run takes from the previous run; a new case is not in it, so it runs). The whole selection is still COLLECTED, so a mutation that breaks an import shows
  as a collection error even where no kept case would have reached it.

PYTEST_DONT_REWRITE: pytest would rewrite this plugin's asserts (it has none) afresh in every run's
process, which writes no bytecode; and rewriting is what warns when a module is already imported.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

_OUT = os.environ.get("SEAMGATE_REACH_OUT")
_ONLY = os.environ.get("SEAMGATE_ONLY")
_SKIP = os.environ.get("SEAMGATE_SKIP")


class _Recorder:
    """coverage.py with one dynamic context per case; the bookkeeping of fixtures and children."""

    def __init__(self, out: str, root: str) -> None:
        import coverage

        self.out, self.root = out, os.path.realpath(root)
        self.cov = coverage.Coverage(data_file=None, config_file=False, branch=False, source=[self.root],
                                     messages=False)
        self.children_dir = Path(out + ".children")
        self.children_dir.mkdir(parents=True, exist_ok=True)
        self.context = ""
        self.fixtures: dict[str, list[str]] = {}
        #: context -> [python children started, other children started]
        self.spawned: dict[str, list[int]] = {}
        self.spawn_regions: set[tuple[str, int, int, str]] = set()
        self.cases: list[str] = []
        self.slots: dict[str, str] = {}
        #: context -> project files (not Python) it opened, and project folders it listed (``rel/``).
        self.opened: dict[str, set[str]] = {}
        self.open_regions: set[tuple[str, int, int, str]] = set()
        #: The prefixes a path under the project starts with (the tree as given, and its real path).
        self.prefixes = tuple({os.path.abspath(root) + os.sep, self.root + os.sep})
        self.recording = True
        self.cov.start()
        self._watch_children()
        sys.addaudithook(self._audit)  # never removed (CPython has no way); ``recording`` ends it at ``write``

    def switch(self, context: str) -> str:
        """Make ``context`` current: lines go to it, and so does every Python child started under it."""
        previous, self.context = self.context, context
        self.cov.switch_context(context)
        if context:
            os.environ["COVERAGE_PROCESS_START"] = str(self._child_config(context))
        else:
            os.environ.pop("COVERAGE_PROCESS_START", None)
        return previous

    def _child_config(self, context: str) -> Path:
        """A coverage config for the children of ``context``: their data lands in its own files.

        coverage.py's ``.pth`` hook (installed with it) starts measuring in any Python child whose
        environment names this file, so a child started with the case's environment is measured.
        """
        slot = self.slots.setdefault(context, f"c{len(self.slots):05d}")
        config = self.children_dir / f"{slot}.ini"
        if not config.exists():
            # ``patch = _exit``: a multiprocessing child ends with os._exit, which would lose its data.
            config.write_text(f"[run]\ndata_file = {self.children_dir / (slot + '.data')}\nparallel = True\n"
                              f"branch = False\npatch = _exit\nsigterm = True\nsource =\n    {self.root}\n", encoding="utf-8")
        return config

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        """``sys.audit`` hook: note a project file (not Python) the current context opens, or a project
        folder a case or fixture lists (see the module docstring)."""
        if event not in _FILE_EVENTS or not self.recording or not args:
            return
        path = "." if args[0] is None else args[0]  # ``os.listdir()``: the working folder
        if isinstance(path, int):
            return  # a file descriptor: its path was seen when it was opened
        try:
            full = os.path.abspath(os.fsdecode(path))
        except (TypeError, ValueError):
            return
        if event == "open":
            if full.endswith(_PYTHON_SUFFIXES) or not full.startswith(self.prefixes) or _BYTECODE in full:
                return
            rel = os.path.relpath(os.path.realpath(full), self.root)
            if not rel.startswith(".."):
                self.opened.setdefault(self.context, set()).add(rel)
                self._note_stack(regions=self.open_regions, depth=2)
            return
        if not self.context or not (full + os.sep).startswith(self.prefixes):
            return  # a listing at import or collection time: a new file there can only add new cases
        if sys._getframe(1).f_code.co_filename.startswith("<frozen importlib"):
            return  # the import system looking for a module
        rel = os.path.relpath(os.path.realpath(full), self.root)
        if not rel.startswith(".."):
            self.opened.setdefault(self.context, set()).add("" if rel == "." else rel + "/")

    def _watch_children(self) -> None:
        """Count, per context, the Python and the other children it starts (and where it started them)."""
        def noting(original: Callable[..., Any], python: Callable[..., bool],
                   env_at: int | None = None) -> Callable[..., Any]:
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                kind = python(*args, **kwargs) if self.context else None
                if kind is not None:
                    self.note_child(kind)
                    if kind and env_at is not None and len(args) > env_at:
                        args = (*args[:env_at], self._measured_env(args[env_at]), *args[env_at + 1:])
                return original(*args, **kwargs)
            return wrapper

        never = lambda *a, **k: False  # noqa: E731 - a fork's child is not measured (its data is lost)
        # ``subprocess.Popen`` starts its children through ``_posixsubprocess.fork_exec`` (counted
        # below) or ``os.posix_spawn``; wrapping Popen too would count each child twice.
        spawn_is_python = lambda path, *a, **k: _is_python(path)  # noqa: E731 - posix_spawn(path, argv, env)
        for name, python, env_at in (("fork", never, None), ("forkpty", never, None),
                                     ("posix_spawn", spawn_is_python, 2), ("posix_spawnp", never, None),
                                     ("system", never, None)):
            if hasattr(os, name):
                setattr(os, name, noting(getattr(os, name), python, env_at))
        try:
            import _posixsubprocess  # multiprocessing's spawn and forkserver start children here

            # fork_exec(args, executable_list, close_fds, fds_to_keep, cwd, env_list, ...)
            _posixsubprocess.fork_exec = noting(_posixsubprocess.fork_exec, _fork_exec_is_python, 5)
            if hasattr(subprocess, "_fork_exec"):  # subprocess keeps its own reference to it
                subprocess._fork_exec = noting(subprocess._fork_exec, _fork_exec_is_python, 5)
        except (ImportError, AttributeError):
            pass

    def _measured_env(self, env: Any) -> Any:
        """A Python child's environment with ``COVERAGE_PROCESS_START`` put back when the case cleared it.

        A case that starts its child with a clean environment (``env={"PATH": ...}``) would drop the
        variable that makes coverage.py's ``.pth`` hook measure the child; its reach would then be
        unknown and the case would run in every row. ``None`` (inherit) keeps ``os.environ``, which
        already names the file.
        """
        config = os.environ.get("COVERAGE_PROCESS_START")
        if env is None or not config:
            return env
        if isinstance(env, dict):  # os.posix_spawn's mapping
            return env if "COVERAGE_PROCESS_START" in env else {**env, "COVERAGE_PROCESS_START": config}
        entries = list(env)  # fork_exec's [b"KEY=value", ...]
        if any(os.fsencode(e).startswith(b"COVERAGE_PROCESS_START=") for e in entries):
            return env
        return [*entries, b"COVERAGE_PROCESS_START=" + os.fsencode(config)]

    def note_child(self, python: bool, skip: str | None = None) -> None:
        """A child (a Python one or another) starts under the current context: count it, and keep the
        project functions on the stack above the starter's frame (but those of the file ``skip``)."""
        counts = self.spawned.setdefault(self.context, [0, 0])
        counts[0 if python else 1] += 1
        self._note_stack(skip)

    def _note_stack(self, skip: str | None = None, regions: set[tuple[str, int, int, str]] | None = None,
                    depth: int = 3) -> None:
        """Keep the body of every project function on the stack (file, first line, last line, context) in
        ``regions`` (``spawn_regions`` unless given), but those of the file ``skip``; from ``depth`` frames up
        on (for ``note_child``: the caller of its caller, the wrapper or ``python_child``)."""
        regions = self.spawn_regions if regions is None else regions
        frame = sys._getframe(depth)
        while frame is not None:
            code = frame.f_code
            real = os.path.realpath(code.co_filename)
            if code.co_name != "<module>" and not code.co_filename.startswith("<") \
                    and real.startswith(self.root + os.sep) and real != skip:
                lines = [line for _, _, line in code.co_lines() if line is not None]
                if lines:
                    regions.add((os.path.relpath(real, self.root), min(lines), max(lines), self.context))
            frame = frame.f_back

    def children_lines(self) -> tuple[dict[str, dict[str, list[int]]], dict[str, int]]:
        """What the measured children of each context executed, and how many data files each left."""
        from coverage import CoverageData

        found: dict[str, dict[str, set[int]]] = {}
        files: dict[str, int] = {}
        for context, slot in self.slots.items():
            for data_file in self.children_dir.glob(f"{slot}.data.*"):
                data = CoverageData(basename=str(data_file))
                try:
                    data.read()
                except Exception:  # noqa: BLE001 - a child killed mid-write: its reach stays unknown
                    continue
                files[context] = files.get(context, 0) + 1
                for measured in data.measured_files():
                    real = os.path.realpath(measured)
                    if real.startswith(self.root + os.sep):
                        rel = os.path.relpath(real, self.root)
                        lines = set(data.lines(measured) or ())
                        bodies = _body_lines(real)
                        lines = lines if bodies is None else lines & bodies
                        if lines:
                            found.setdefault(context, {}).setdefault(rel, set()).update(lines)
        return {c: {f: sorted(v) for f, v in d.items()} for c, d in found.items()}, files

    def write(self) -> None:
        self.recording = False
        self.cov.stop()
        os.environ.pop("COVERAGE_PROCESS_START", None)
        data = self.cov.get_data()
        files: dict[str, dict[str, list[int]]] = {}
        for measured in data.measured_files():
            real = os.path.realpath(measured)
            if not real.startswith(self.root + os.sep):
                continue
            by_context: dict[str, list[int]] = {}
            for line, contexts in data.contexts_by_lineno(measured).items():
                for context in contexts:
                    by_context.setdefault(context, []).append(line)
            files[os.path.relpath(real, self.root)] = {c: sorted(v) for c, v in by_context.items()}
        children, data_files = self.children_lines()
        # A context's children are known when it started only Python children and each left its data.
        unknown = sorted(c for c, (python, other) in self.spawned.items() if other or data_files.get(c, 0) < python)
        Path(self.out).write_text(json.dumps({
            "root": self.root, "files": files, "fixtures": self.fixtures, "children": children,
            "spawned": unknown, "spawn_counts": {c: [*n, data_files.get(c, 0)] for c, n in self.spawned.items()},
            "spawn_regions": sorted(self.spawn_regions), "cases": self.cases,
            "opened": {c: sorted(paths) for c, paths in self.opened.items()}, "open_regions": sorted(self.open_regions),
        }), encoding="utf-8")
        # The children's raw data is in the record now; kept, it was a quarter of a run folder's size.
        shutil.rmtree(self.children_dir, ignore_errors=True)


#: The ``sys.audit`` events of a file opened or a folder listed (``os.open`` and ``io.open`` both raise ``open``).
_FILE_EVENTS = frozenset({"open", "os.listdir", "os.scandir"})
#: Opened files that are code: their reach is what coverage.py measures, line by line.
_PYTHON_SUFFIXES = (".py", ".pyc", ".pyi", ".so", ".pth")
#: The folder of compiled bytecode (an import writes ``x.pyc.<id>`` there, then renames it).
_BYTECODE = f"{os.sep}__pycache__{os.sep}"


@functools.lru_cache(maxsize=None)
def _body_lines(path: str) -> frozenset[int] | None:
    """The lines of ``path`` inside function bodies.

    A child's data has no per-case context, so the module-level lines it ran importing a file (the
    ``import``, ``def`` and ``class`` statements) would read as reaching that file. They are the
    same lines the parent runs at import, where they reach no case (``harness/reach/reach.py``); only
    what the child ran inside functions is its reach. ``None`` (keep every line): the file does not parse.
    """
    import ast

    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = node.body if isinstance(node.body, list) else [node.body]
            lines.update(range(body[0].lineno, (node.end_lineno or body[-1].lineno) + 1))
    return frozenset(lines)


def _is_python(program: Any) -> bool:
    try:
        return os.path.realpath(os.fsdecode(program)) == os.path.realpath(sys.executable)
    except TypeError:
        return False


def _fork_exec_is_python(args: Any, executables: Any, *rest: Any, **kwargs: Any) -> bool | None:
    """``_posixsubprocess.fork_exec(args, executable_list, ...)`` running this interpreter.

    ``None`` (not counted): multiprocessing's resource tracker, which runs only the standard
    library and outlives the session, so its data could never be read in time.
    """
    if any(b"multiprocessing.resource_tracker" in os.fsencode(a) for a in (args or ()) if isinstance(a, (str, bytes))):
        return None
    return bool(executables) and all(_is_python(e) for e in executables)


def python_child(env: dict[str, str], starter: str | None = None) -> dict[str, str]:
    """A case is starting a Python child that no wrapper above sees (``harness/zygote.py`` forks it
    from a zygote): count it as a Python child of the running case, keep the project functions on
    the stack, and return ``env`` with ``COVERAGE_PROCESS_START`` naming the case's child config.
    A counted child whose data never arrives leaves the case's reach unknown, as for any child.
    ``starter``: the file of the function that starts it, whose frames are not kept (it caches nothing)."""
    if _RECORDER is None or not _RECORDER.context:
        return env
    _RECORDER.note_child(True, skip=os.path.realpath(starter) if starter else None)
    return _RECORDER._measured_env(env)


def _recorder() -> _Recorder | None:
    """The recorder when ``SEAMGATE_REACH_OUT`` asks for one and coverage.py is importable."""
    if not _OUT:
        return None
    try:
        return _Recorder(_OUT, os.getcwd())
    except ImportError:  # no coverage here: nothing recorded, so every case of every mutation runs
        return None


_RECORDER = _recorder()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    if _RECORDER is None:
        yield
        return
    _RECORDER.cases.append(item.nodeid)
    _RECORDER.fixtures[item.nodeid] = list(getattr(item, "fixturenames", ()))
    previous = _RECORDER.switch(item.nodeid)
    try:
        yield
    finally:
        _RECORDER.switch(previous)


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any):  # type: ignore[no-untyped-def]
    if _RECORDER is None or fixturedef.scope == "function":
        yield
        return
    previous = _RECORDER.switch(f"fixture:{fixturedef.argname}")
    try:
        yield
    finally:
        _RECORDER.switch(previous)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _ONLY and not _SKIP:
        return
    keep = set(json.loads(Path(_ONLY).read_text(encoding="utf-8"))) if _ONLY else None
    skip = set(json.loads(Path(_SKIP).read_text(encoding="utf-8"))) if _SKIP else set()
    wanted = lambda nodeid: (keep is None or nodeid in keep) and nodeid not in skip  # noqa: E731
    kept = [item for item in items if wanted(item.nodeid)]
    dropped = [item for item in items if not wanted(item.nodeid)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _RECORDER is not None:
        _RECORDER.write()
