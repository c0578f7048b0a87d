"""The sweep plugin: collect once, then fork one child per mutant that runs the cases reaching it.

Loaded through ``PYTEST_PLUGINS=harness.sweep.pytest_sweep`` in a run over a copy of the project whose
swept files are mutmut's trampolined form (every mutant of a file in one module; the active one is
chosen at call time by ``MUTANT_UNDER_TEST``). Driven by ``SEAMGATE_SWEEP_PLAN=FILE`` (taken out of the
environment as the plugin loads, with its ``PYTEST_PLUGINS`` entry: ``_take_plan``), a JSON object::

    {"out": FILE, "mutants": [{"id": "pkg.mod.x_f__mutmut_3", "cases": [nodeid, ...], "timeout": 12.0}, ...]}

The session collects the selection as usual, then, instead of running the items, forks a child per
entry (``id`` ``""`` is the trampolined copy with no mutant active: the clean check). The child makes
the entry's mutant active, runs exactly its cases in collection order WITHOUT fail-fast (every
killer is recorded, not the first), and writes one JSON line to ``out``::

    {"id": ..., "end": "completed" | "timeout" | "crash", "failed": [nodeid, ...], "ran": [nodeid, ...],
     "missing": [nodeid, ...], "wall": seconds, "detail": "..."}

A case is ``failed`` when any of its setup, call or teardown reports failed. Each child is its own
process group; one that passes its ``timeout`` is killed with its whole group. mutmut forks the same
way after collecting once; unlike mutmut, the child never stops at the first failing case.
"""

from __future__ import annotations

import json
import os
import select
import signal
import time
from pathlib import Path
from typing import Any

import pytest


def _take_plan() -> str | None:
    """The plan's path, taken OUT of the environment together with this plugin's ``PYTEST_PLUGINS`` entry.

    The cases then run in the baseline's environment, and a pytest session a case starts (a plugin's
    test suite does: ``tests/plugin``) is the case's own. Left in, both reached that inner session,
    which ran the whole plan itself: it collected none of the plan's cases, ran none of its own, and
    wrote an "every case missing" result for each mutant and the clean check over the real ones (the
    mutants came back OWED, "not collected in the trampolined copy", and a kill that only the inner
    session could see was never seen).
    """
    plan = os.environ.pop("SEAMGATE_SWEEP_PLAN", None)
    others = [name for name in os.environ.get("PYTEST_PLUGINS", "").split(",") if name.strip() not in ("", __name__)]
    if others:
        os.environ["PYTEST_PLUGINS"] = ",".join(others)
    else:
        os.environ.pop("PYTEST_PLUGINS", None)
    return plan


_PLAN = _take_plan()
#: Node ids of the cases whose reports failed, in the running child.
_FAILED: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _PLAN and report.failed and report.nodeid not in _FAILED:
        _FAILED.append(report.nodeid)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    if not _PLAN:
        return None
    plan = json.loads(Path(_PLAN).read_text(encoding="utf-8"))
    _one_thread()
    _short_failures()
    items = {item.nodeid: item for item in session.items}
    with open(plan["out"], "a", encoding="utf-8") as out:
        for entry in plan["mutants"]:
            result = _run_entry(session, items, entry)
            out.write(json.dumps(result) + "\n")
            out.flush()
    return True


def _one_thread() -> None:
    """Keep torch (when the suite loaded it) off OpenMP thread teams: a process that ran a team and
    then forks leaves the child waiting on threads that do not exist."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            torch.set_num_threads(1)
        except Exception:  # noqa: BLE001 - best effort; a suite without parallel ops does not need it
            pass


def _short_failures() -> None:
    """A failure's report is one line, not a formatted traceback: a sweep reads WHICH cases failed, and
    formatting every failure of every mutant (sources, reprs, diffs) costs more than running the cases."""
    import _pytest.reports as reports

    if hasattr(reports, "_format_failed_longrepr"):
        reports._format_failed_longrepr = lambda item, call, excinfo: f"{excinfo.typename}: {str(excinfo.value)[:200]}"


def _run_entry(session: pytest.Session, items: dict[str, pytest.Item], entry: dict[str, Any]) -> dict[str, Any]:
    wanted = entry.get("cases")
    keep = None if wanted is None else set(wanted)
    chosen = [item for item in session.items if keep is None or item.nodeid in keep]  # collection order
    missing = [] if wanted is None else [i for i in wanted if i not in items]
    started = time.perf_counter()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        _child(session, entry["id"], chosen, write)
    os.close(write)
    end, text, detail = _collect(pid, read, float(entry.get("timeout", 60.0)))
    result: dict[str, Any] = {"id": entry["id"], "end": end, "failed": [], "ran": [], "missing": missing,
                              "wall": round(time.perf_counter() - started, 4), "detail": detail}
    if end == "completed":
        try:
            result.update(json.loads(text))
        except ValueError:
            result.update(end="crash", detail=f"the child wrote no result: {text[-200:]!r}")
    return result


def _child(session: pytest.Session, mutant: str, chosen: list[pytest.Item], write: int) -> None:
    code = 0
    try:
        os.setpgid(0, 0)
        if mutant:
            from mutmut.mutation.trampoline import set_mutant_under_test

            set_mutant_under_test(mutant)
        else:
            os.environ.pop("MUTANT_UNDER_TEST", None)
        _FAILED.clear()
        for index, item in enumerate(chosen):
            following = chosen[index + 1] if index + 1 < len(chosen) else None
            item.ihook.pytest_runtest_protocol(item=item, nextitem=following)
        payload = json.dumps({"failed": list(_FAILED), "ran": [i.nodeid for i in chosen]}).encode()
        while payload:
            payload = payload[os.write(write, payload):]
    except BaseException:  # noqa: BLE001 - whatever happens, the child must never return into the session
        code = 70
    finally:
        os._exit(code)


def _collect(pid: int, read: int, timeout: float) -> tuple[str, str, str]:
    """Read the child's result until it exits or ``timeout`` passes (then its group is killed)."""
    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            _kill(pid)
            os.close(read)
            return "timeout", "", f"no result after {timeout:g} s; its process group was killed"
        ready, _, _ = select.select([read], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(read, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    try:
        os.killpg(pid, signal.SIGKILL)  # whatever the cases left behind in the group
    except (ProcessLookupError, PermissionError):
        pass
    if code != 0:
        why = f"killed by signal {-code}" if code < 0 else f"exited {code} before writing its result"
        return "crash", "", why
    return "completed", b"".join(chunks).decode("utf-8", "replace"), ""


def _kill(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
