"""The executor: turns a ``Run`` (source state, selection, environment, arm) into a ``RunOutcome``.

A run is a value. Every run is a fresh process (a fork-server child, or a fresh interpreter where
fork is unavailable), because switches are read once per process. pytest runs:

- in the materialized tree (cwd), with that tree's import roots (the root, ``src/``, the configured
  package folders: ``harness/rows/import_roots.py``) FIRST on ``sys.path``/``PYTHONPATH`` and a finder that
  resolves the project's top-level names there ahead of editable ``.pth`` lines and import finders;
  the counting plugin records every project module loaded from OUTSIDE the tree, and such a run holds
  an error case naming the module and its path (the gate is an ERROR, never PASS or FAIL);
- without fail-fast (``--maxfail=0`` overrides a project's ``-x``), with ``--junitxml``,
  ``-p no:cacheprovider`` and the counting plugin ``-p harness.rows.pytest_counting``; pytest's
  assertion-pass hook only for a gate with ``count_assertions: true`` (``COUNT_ASSERTIONS_ENV``);
- with ``SEAM_ARMS=<arm>`` and the gate's environment; ``SEAM_*`` and ``PYTEST_*`` variables of the
  caller's own shell are dropped so a gate means the same thing on every machine.

How a run ends: ``completed`` (pytest wrote its report; its exit code is kept), ``timeout`` (the
whole process group was killed at the limit), ``crash`` (a signal, or an exit without a JUnit report,
e.g. ``os._exit`` inside a test).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from seam.arms import DEFAULT_ARM
from harness.config import COUNT_ASSERTIONS_ENV
from harness.plan.matrix import grouped_by_folder
from harness.rows.forkserver import CHILD_SETUP_FAILED, ForkServer, FreshInterpreter
from harness.rows.import_roots import NAMES_ENV, ROOTS_ENV, import_roots, top_level_names
from harness.rows.preload import TorchUse
from harness.zygote import PRELOAD_ENV as ZYGOTE_PRELOAD_ENV
from reports.junit_in import SideFile, read_cases
from reports.outcome import CaseOutcome, RunOutcome

#: The folder that holds the ``harness`` package; appended (last) to a run's path for the plugin.
HARNESS_ROOT = Path(__file__).resolve().parents[2]
#: Variables of the caller's environment a run never inherits (a gate states its own).
_DROPPED_PREFIXES = ("SEAM_", "PYTEST_")
_DROPPED = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONSAFEPATH", "SEAMGATE_REACH_OUT", "SEAMGATE_ONLY", "SEAMGATE_SKIP",
            ROOTS_ENV, NAMES_ENV, COUNT_ASSERTIONS_ENV}
#: Seconds granted to a killed process group to be reaped before we stop waiting.
_REAP_GRACE = 10.0

Launcher = ForkServer | FreshInterpreter


class RunsStopped(RuntimeError):
    """A run refused by a stopped executor (``Executor.stop``: SIGINT/SIGTERM, or a row's error stopped the pool).

    A refused run has no outcome: the pool that stopped raises its own cause, and a sweep keeps no row for the
    mutants of a batch that did not end (neither killed nor survived)."""


@dataclass(frozen=True)
class Run:
    """One pytest run: which tree, which tests, which environment, which platform arm."""

    #: Human label ("baseline cpu-emulated", "mutation drop-join cpu-emulated").
    label: str
    #: The materialized source state; pytest's cwd and the first entry of its path.
    tree: Path
    #: pytest arguments: paths or node ids relative to ``tree``.
    select: tuple[str, ...]
    #: Platform arm, exported as ``SEAM_ARMS``.
    arm: str = DEFAULT_ARM
    #: The gate's environment, on top of the caller's (minus ``SEAM_*``/``PYTEST_*``).
    env: Mapping[str, str] = field(default_factory=dict)
    #: Seconds before the run's process group is killed and the run is a TIMEOUT.
    timeout: float = 600.0
    #: Record each case's reach (``harness/rows/pytest_reach.py``) into this file.
    reach: Path | None = None
    #: Run only these node ids of the (still wholly collected) selection; ``None``: every case.
    only: frozenset[str] | None = None
    #: Do not run these node ids (cells taken from the previous run); every other case runs.
    skip: frozenset[str] = frozenset()
    #: The tree is a copy the harness owns: the child may write bytecode into it (never a user's tree).
    write_bytecode: bool = False


@dataclass(frozen=True)
class Call:
    """One ``module:callable`` invocation in a fresh child (lane fingerprints, platform probe)."""

    label: str
    #: ``pkg.module:function``; called with ``arg`` as its one argument; must return JSON data.
    target: str
    arg: Any = None
    #: The tree first on the child's path (``None``: only the harness itself is importable).
    tree: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 120.0


@dataclass(frozen=True)
class CallOutcome:
    """What a ``Call`` returned, or how it ended badly."""

    label: str
    end: str
    exit_code: int | None
    result: Any = None
    detail: str = ""


def run_environment(env: Mapping[str, str], tree: Path | None, arm: str | None,
                    base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's whole environment: the caller's, cleaned, plus the run's own."""
    source = dict(os.environ if base is None else base)
    out = {k: v for k, v in source.items() if k not in _DROPPED and not k.startswith(_DROPPED_PREFIXES)}
    out.update(env)
    roots = [str(r) for r in import_roots(tree)] if tree else []
    out["PYTHONPATH"] = os.pathsep.join(roots + [str(HARNESS_ROOT)])
    if tree:
        out[ROOTS_ENV] = os.pathsep.join(roots)
        out[NAMES_ENV] = ",".join(top_level_names([Path(r) for r in roots]))
    out["PYTHONDONTWRITEBYTECODE"] = "1"
    if arm is not None:
        out["SEAM_ARMS"] = arm
    return out


def _front(tree: Path | None) -> dict[str, list[str]]:
    """``path_front`` (the tree's import roots) and ``claim`` (its top-level names) of a request."""
    if tree is None:
        return {"path_front": [], "claim": []}
    roots = import_roots(tree)
    return {"path_front": [str(r) for r in roots], "claim": top_level_names(roots)}


#: The private name of seamgate's ``harness`` in a run whose project claims ``harness`` for itself (seamgate_plugin.py).
PRIVATE_HARNESS = "seamgate_plugin.harness"


def plugin_package(tree: Path | None) -> str:
    """The name a run's pytest loads our run-side plugins under: ``harness``, as always, unless the project
    has a top-level ``harness`` of its own that holds no such plugins (its name is claimed for the copy, so
    ``-p harness.rows.pytest_counting`` would find the project's package): then ``PRIVATE_HARNESS``."""
    if tree is None:
        return "harness"
    for root in import_roots(tree):
        if (root / "harness" / "__init__.py").is_file() or (root / "harness.py").is_file():
            return "harness" if (root / "harness" / "rows" / "pytest_counting.py").is_file() else PRIVATE_HARNESS
    return "harness"


def pytest_argv(run: Run, junit: Path, counts: Path) -> list[str]:
    """The pytest command line of ``run`` (the project's own ini still applies).

    A collection error in one file does not stop the session (``--continue-on-collection-errors``):
    a run may serve several gates, and each gate reads only its own part (``harness/plan/matrix.py``).
    """
    rows = f"{plugin_package(run.tree)}.rows"
    reach = ["-p", f"{rows}.pytest_reach"] if run.reach is not None or run.only is not None or run.skip else []
    # The assertion-pass hook only for a gate that asks (``count_assertions: true``): it changes what
    # tests see (a passing assert is formatted, its operands kept alive) and costs time.
    count = ["-o", "enable_assertion_pass_hook=true"] if run.env.get(COUNT_ASSERTIONS_ENV) == "1" else []
    return [
        *grouped_by_folder(run.select),
        "--rootdir", str(run.tree),
        # First: the zygote (``harness/zygote.py``) is forked before coverage.py and the project load.
        "-p", f"{rows}.pytest_zygote",
        *reach,
        "-p", f"{rows}.pytest_counting", "--seamgate-counts", str(counts),
        "-p", "no:cacheprovider",
        "--junitxml", str(junit), "-o", "junit_family=xunit2",
        *count,
        "--maxfail=0", "--continue-on-collection-errors", "-q", "-rN",
    ]


#: The thread-count variables of the libraries a run computes with (torch's intra-op pool is OpenMP).
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def threads_per_run(jobs: int) -> int:
    """The cores this process may use, shared among ``jobs`` runs side by side (at least one each).

    Left at its default, every run's OpenMP pool takes EVERY core: two runs on two cores then spin
    against each other, and a tiny model's step costs twice the CPU (``bench/bench_threads.py``).
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, jobs))


def thread_environment(threads: int | None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``THREAD_VARS`` set to ``threads``, unless ``threads`` is ``None`` or the user's environment sets any."""
    source = os.environ if base is None else base
    if threads is None or any(var in source for var in THREAD_VARS):
        return {}
    return {var: str(threads) for var in THREAD_VARS}


class Executor:
    """Executes runs and calls through one launcher; each gets its own folder under ``workdir``.

    ``threads``: each run's share of the cores (``threads_per_run``), handed to it through
    ``THREAD_VARS`` (and, in a forked child, ``torch.set_num_threads``); ``None`` leaves them alone.
    ``torch``: the project uses torch (``harness/rows/preload.py``; a ``TorchUse`` is asked at the first run); if
    not, a run's zygote does not import it.
    """

    def __init__(self, launcher: Launcher, workdir: Path, threads: int | None = None,
                 torch: bool | TorchUse = True) -> None:
        self.launcher, self.workdir = launcher, workdir
        self.threads = threads
        self.torch = torch
        self._counter = itertools.count(1)
        self._lock = threading.Lock()
        #: Set by ``stop``: no run starts any more.
        self.stopped = threading.Event()

    def stop(self) -> None:
        """Start no run any more (``execute`` and ``call`` raise ``RunsStopped``) and kill the runs in flight.

        The row pool's stop (``harness/rows/pool.py``): a thread whose run was just killed may go on to its next one
        (a sweep's batch runs its mutants' sessions one after another), which the pool would then wait out. The stop
        is this executor's, made for one invocation: its launcher (shared by tests) still starts other executors'
        runs."""
        self.stopped.set()
        self.launcher.kill_all()

    def _run_dir(self, label: str) -> Path:
        """A new folder for one run's logs; a folder an earlier invocation left (``--output DIR``
        used again) is kept, and this run takes the next free number."""
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", label)[:60]
        (self.workdir / "runs").mkdir(parents=True, exist_ok=True)
        while True:
            with self._lock:
                n = next(self._counter)
            path = self.workdir / "runs" / f"{n:04d}-{slug}"
            try:
                path.mkdir()
            except FileExistsError:
                continue
            return path

    def execute(self, run: Run) -> RunOutcome:
        """Run pytest for ``run`` in a fresh process and read what it reported."""
        folder = self._run_dir(run.label)
        junit, counts = folder / "junit.xml", folder / "counts.json"
        env = {**thread_environment(self.threads), **run.env}
        if not self.torch:  # the run's zygote (harness/rows/pytest_zygote.py) forks without importing torch
            env[ZYGOTE_PRELOAD_ENV] = ""
        if run.reach is not None:
            env["SEAMGATE_REACH_OUT"] = str(run.reach)
        if run.only is not None:
            (folder / "only.json").write_text(json.dumps(sorted(run.only)), encoding="utf-8")
            env["SEAMGATE_ONLY"] = str(folder / "only.json")
        if run.skip:
            (folder / "skip.json").write_text(json.dumps(sorted(run.skip)), encoding="utf-8")
            env["SEAMGATE_SKIP"] = str(folder / "skip.json")
        request = {
            "mode": "pytest", "argv": pytest_argv(run, junit, counts), "cwd": str(run.tree),
            "env": run_environment(env, run.tree, run.arm),
            **_front(run.tree), "path_back": [str(HARNESS_ROOT)], "write_bytecode": run.write_bytecode,
            "stdout": str(folder / "stdout.txt"), "stderr": str(folder / "stderr.txt"),
        }
        end, status, wall, detail = self._launch(request, run.timeout)
        outcome = _outcome(run.label, end, status, wall, detail, folder)
        if run.only is None and not run.skip and outcome.end == "completed" and outcome.exit_code == 5 \
                and not outcome.cases:
            why = (f"pytest collected no test from {' '.join(run.select)} (exit 5): a run that judges nothing is "
                   f"an error, never green; see {folder / 'stdout.txt'}: {_tail(folder / 'stdout.txt', 300)}")
            outcome = replace(outcome, cases=(CaseOutcome(nodeid="", kind="error", message=why),))
        return outcome

    def call(self, call: Call) -> CallOutcome:
        """Invoke ``call.target(call.arg)`` in a fresh child; its JSON result comes back."""
        folder = self._run_dir(call.label)
        result = folder / "result.json"
        request = {
            "mode": "call", "target": call.target, "arg": call.arg, "result": str(result),
            "cwd": str(call.tree or folder),
            "env": run_environment({**thread_environment(self.threads), **call.env}, call.tree, None),
            **_front(call.tree), "path_back": [str(HARNESS_ROOT)],
            "stdout": str(folder / "stdout.txt"), "stderr": str(folder / "stderr.txt"),
        }
        end, status, _, detail = self._launch(request, call.timeout)
        if end == "completed" and status == 0 and result.is_file():
            return CallOutcome(call.label, end, status, json.loads(result.read_text()))
        if end == "completed":
            end, detail = "crash", f"exited {status}: {_tail(folder / 'stderr.txt')}"
        return CallOutcome(call.label, end, status if end == "completed" else None, None, detail)

    def _launch(self, request: dict[str, Any], timeout: float) -> tuple[str, int | None, float, str]:
        folder = Path(request["stdout"]).parent
        if self.stopped.is_set():
            raise RunsStopped(f"run {folder} not started: the runs were stopped (SIGINT/SIGTERM, or a row's error)")
        started = time.perf_counter()
        handle = self.launcher.submit(request)
        if self.stopped.is_set():
            # Stopped while it was submitted: ``stop`` sets the flag before it kills, and we submit before we read
            # it, so either its ``kill_all`` found this run or we see the flag here.
            handle.kill()
            handle.wait(_REAP_GRACE)
            raise RunsStopped(f"run {folder} killed as it started: the runs were stopped (SIGINT/SIGTERM, or a "
                              "row's error)")
        if handle.wait(timeout):
            return "completed", handle.status, time.perf_counter() - started, ""
        handle.kill()
        handle.wait(_REAP_GRACE)
        wall = time.perf_counter() - started
        return "timeout", None, wall, f"no exit after {timeout:g} s; its process group was killed"


def _outcome(label: str, end: str, status: int | None, wall: float, detail: str, folder: Path) -> RunOutcome:
    log = str(folder / "stderr.txt")
    side = SideFile.read(folder / "counts.json")
    cases = read_cases(folder / "junit.xml", side)
    if end == "timeout":
        return RunOutcome(label, "timeout", None, cases or (), wall, side.session_seconds, detail, log)
    if status is None or status < 0:
        name = _signal_name(-(status or 0))
        return RunOutcome(label, "crash", None, cases or (), wall, 0.0, f"killed by {name}", log)
    if cases is None:
        why = "child setup failed" if status == CHILD_SETUP_FAILED else "pytest wrote no JUnit report"
        text = f"exited {status}, {why}: {_tail(folder / 'stderr.txt') or _tail(folder / 'stdout.txt')}"
        return RunOutcome(label, "crash", status, (), wall, 0.0, text, log)
    cases = _with_collect_errors(cases, folder / "counts.json")
    foreign = _foreign(folder / "counts.json")
    if foreign:
        cases = (foreign, *cases)
    return RunOutcome(label, "completed", status, cases, wall, side.session_seconds, "", log)


def _with_collect_errors(cases: tuple[CaseOutcome, ...], counts: Path) -> tuple[CaseOutcome, ...]:
    """A collection error says what broke (``ModuleNotFoundError: No module named 'x'``), not only
    JUnit's "collection failure": the counting plugin kept pytest's own report of it."""
    try:
        errors = json.loads(counts.read_text(encoding="utf-8")).get("collect_errors") or []
    except (OSError, ValueError, AttributeError):
        return cases
    why = {e.get("nodeid", ""): underlying_error(str(e.get("message", ""))) for e in errors}
    return tuple(replace(c, message=why[c.nodeid]) if c.kind == "error" and why.get(c.nodeid) else c for c in cases)


def underlying_error(longrepr: str) -> str:
    """The error lines of a collection report (``E   ModuleNotFoundError: ...``), else its last line."""
    lines = [line[1:].strip() for line in longrepr.splitlines() if line.startswith("E ") and line[1:].strip()]
    if lines:
        return "collection failed: " + " ".join(lines)[-600:]
    rest = [line.strip() for line in longrepr.splitlines() if line.strip()]
    return "collection failed: " + (rest[-1][-600:] if rest else "no detail")


def _foreign(counts: Path) -> CaseOutcome | None:
    """An error case when the run imported project modules from outside its tree (the copy's code did not run)."""
    try:
        found = json.loads(counts.read_text(encoding="utf-8")).get("foreign_imports") or []
    except (OSError, ValueError, AttributeError):
        return None
    if not found:
        return None
    shown = "; ".join(f"{f['module']} from {f['path']}" for f in found[:3])
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    return CaseOutcome(
        nodeid="", kind="error",
        message=(f"the copy's code is not what ran: project module {shown}{more}, outside the copy; an editable "
                 "install's .pth or import finder came first, or the package folder is not configured "
                 "(pyproject [tool.setuptools] package-dir / packages.find where, setup.cfg [options] package_dir)"),
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _tail(path: Path, limit: int = 600) -> str:
    try:
        return path.read_text(errors="replace")[-limit:].strip()
    except OSError:
        return ""

