"""The sweep plugin: collect once, then fork one child per mutant that runs the cases reaching it.

Loaded through ``PYTEST_PLUGINS=harness.sweep.pytest_sweep`` in a run over a copy of the project whose
swept files are mutmut's trampolined form (every mutant of a file in one module; the active one is
chosen at call time by ``MUTANT_UNDER_TEST``). Driven by ``SEAMGATE_SWEEP_PLAN=FILE`` (taken out of the
environment as the plugin loads, with its ``PYTEST_PLUGINS`` entry: ``_take_plan``), a JSON object::

    {"out": FILE, "durations": {nodeid: seconds, ...}, "case_limits": {nodeid: seconds, ...},
     "mutants": [{"id": "pkg.mod.x_f__mutmut_3", "cases": [nodeid, ...], "timeout": 12.0, "stop": true}, ...]}

The session collects the selection as usual, then, instead of running the items, forks a child per
entry (``id`` ``""`` is the trampolined copy with no mutant active: the clean check). The child makes
the entry's mutant active and runs exactly its cases in the order most likely to kill fast
(``kill_order``): first the cases that killed a neighbouring mutant (one of the same function) earlier
in this session, then the rest cheapest first by their baseline ``durations``. With ``"stop": true``
(the sweep's default) it stops at the first failing case, as mutmut and PIT do; with ``false``
(``--all-killers``) every case runs and every killer is recorded; there, once a case of the mutant has
failed, a case still running past its own limit (``case_limits``: ``harness/rows/time_limits.py``) is
cut: its child's group is killed, the case is a killer (``cut``), and a new child runs the cases left
(``_until_done``). Before that, such a case running past ``PARK_AT`` of its own limit is PARKED: its child runs
on alone to the case's end or its limit (the same verdict: failed, passed, or cut), while a new child runs the
cases left and the session goes on to its next mutants; the mutant's line is written when its parked cases
have ended (``Parked``, ``Pending``). A case that waits on its own timeouts (cachetools' threading tests under a
mutant that breaks the locking) then costs the session no wall time. It writes one JSON line to ``out``::

    {"id": ..., "end": "completed" | "timeout" | "crash", "failed": [nodeid, ...], "ran": [nodeid, ...],
     "cut": [nodeid, ...], "missing": [nodeid, ...], "wall": seconds, "detail": "..."}

A plan with ``"before_collection": true`` is for mutants whose function also runs while the test files
are imported or collected (a decorator applied at module level): switched on after collection, such a
mutant would be judged with objects its ORIGINAL function built. There the session forks a child per
entry BEFORE collecting; the child switches the mutant on, then collects the files holding the
entry's cases one at a time, likeliest killer's first, running each file's cases before collecting
the next (``_collect_and_run``), so every call, at import or not, goes to the mutant, as in the
mutated source, and a mutant killed in its first file imports no other. It saves what a session of its own costs (a copy of the
tree, a process, pytest's configuration) and keeps its answer. That holds only if no module of the
swept files was imported before the fork (a ``conftest.py`` that imports one ran its code with no
mutant active): then every entry's line says ``"end": "imported"`` and the sweep runs those mutants
in sessions of their own. A collection error of the child's files comes back in ``"errors"``
(``[[nodeid, longrepr], ...]``).

A case is ``failed`` when any of its setup, call or teardown reports failed. The child streams each
failure and each finished case to the session AS IT HAPPENS, so a child killed at its ``timeout``
(with its whole process group: each child is its own) still says which cases had already failed:
those are its killers (the sweep records it killed, not timed out). mutmut forks the same way after
collecting once.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

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
#: ``SEAMGATE_SWEEP_STOP_FIRST=1`` (also taken out of the environment): a plain session, no plan, that
#: stops at its first failing case. A mutant run in a session of its own uses it: the executor's
#: ``--maxfail=0`` comes after any ``-x`` in ``PYTEST_ADDOPTS``, so the stop is asked for here.
_STOP_FIRST = os.environ.pop("SEAMGATE_SWEEP_STOP_FIRST", "") == "1"
#: The session (for ``_STOP_FIRST``).
_SESSION: list[pytest.Session] = []
#: Node ids of the cases whose reports failed, in the running child.
_FAILED: list[str] = []
#: The running child's end of the pipe to the session (``None`` in the session itself).
_STREAM: list[int] = []
#: In a child forked before collection: its entry, and ``broken`` once a file failed to collect; in
#: the session that forked it: ``{"done": True}`` (it collects nothing and runs nothing).
_BEFORE: dict[str, Any] = {}


def pytest_sessionstart(session: pytest.Session) -> None:
    _SESSION.append(session)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if _BEFORE.get("entry") is not None and report.failed:
        _BEFORE["broken"] = True
        _send({"error": [report.nodeid, str(report.longrepr)[-3000:]]})


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> bool | None:
    """A ``before_collection`` plan: a child per entry forked here, each collecting with its mutant on."""
    if not _PLAN:
        return None
    plan = json.loads(Path(_PLAN).read_text(encoding="utf-8"))
    if not plan.get("before_collection"):
        return None
    imported = sorted(name for name in plan.get("modules", ()) if name in sys.modules)
    killed_by: dict[str, list[str]] = {}
    with open(plan["out"], "a", encoding="utf-8") as out:
        emit = _emitter(out, killed_by)
        for entry in plan["mutants"]:
            if imported:
                emit({"id": entry["id"], "end": "imported", "failed": [], "ran": [], "missing": [],
                      "wall": 0.0, "detail": f"{', '.join(imported)} imported before collection"})
            else:
                neighbours = killed_by.get(function_of(entry["id"]), [])
                _fork_before_collection(session, entry, neighbours, plan.get("durations", {}),
                                        _cut_for(entry, plan), emit)
        _drain_parked()
    _BEFORE["done"] = True
    session.items = []
    return True


def _emitter(out: Any, killed_by: dict[str, list[str]]) -> Callable[[dict[str, Any]], None]:
    """Write an entry's result line, and keep its killers for its neighbours' order (``kill_order``)."""
    def emit(result: dict[str, Any]) -> None:
        if result["id"]:
            mine = killed_by.setdefault(function_of(result["id"]), [])
            mine.extend(f for f in result["failed"] if f not in mine)
        out.write(json.dumps(result) + "\n")
        out.flush()
    return emit


def _fork_before_collection(session: pytest.Session, entry: dict[str, Any], neighbours: list[str],
                            durations: dict[str, float], cut: CaseCut | None,
                            emit: Callable[[dict[str, Any]], None]) -> None:
    """The entry's result, emitted, from a child that collects with its mutant on (another for the cases left
    after a cut or parked one). Its cases are reported in the baseline's order (``durations`` holds every baseline case,
    in order): the session collected nothing to order them by."""
    started = time.perf_counter()

    def start(cases: list[str]) -> tuple[int, int]:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            try:
                os.setpgid(0, 0)
                _STREAM.append(write)
                left = {**entry, "cases": cases}
                _BEFORE.update(entry=left)
                _switch(entry["id"])
            except BaseException:  # noqa: BLE001 - the child must never return into the session's loop
                os._exit(70)
            _collect_and_run(session, left, neighbours, durations)  # exits
        os.close(write)
        return pid, read

    wanted = entry.get("cases")
    end, heard, detail, parked = _until_done(start, list(durations) if wanted is None else list(wanted), entry, cut)
    place = {n: i for i, n in enumerate(durations)}
    _settle(parked, end, heard, detail, lambda e, h, d: emit(_result(entry, e, h, d, place, started)))


@dataclass
class CaseCut:
    """``--all-killers``: once its mutant has a killer, a case running past its own limit is cut."""

    #: Each case's own limit in seconds (``harness/rows/time_limits.py`` ``MutantTimes.case_limit``); a
    #: case not in it is never cut. The plan's own mapping, shared by every entry's cut and only read.
    limits: Mapping[str, float]
    #: A case of the mutant already failed (in an earlier child).
    killed: bool = False


def _cut_for(entry: dict[str, Any], plan: dict[str, Any]) -> CaseCut | None:
    """The entry's case cut: only for a mutant whose every killer is wanted (``"stop": false``) when the plan
    has limits; never for the clean check (``id`` ``""``): a case cut there would be red without a mutant,
    so never a killer of any."""
    limits = plan.get("case_limits")
    return None if entry.get("stop") or not entry["id"] or not limits else CaseCut(limits)


def _until_done(start: Callable[[list[str]], tuple[int, int]], cases: list[str], entry: dict[str, Any],
                cut: CaseCut | None) -> tuple[str, list[dict[str, Any]], str, list[Parked]]:
    """Run ``cases`` in children ``start`` forks (its pid and the read end of its pipe), a new child for the
    cases left after one is cut or parked (``CaseCut``), within the entry's one time limit: (end, heard, detail,
    the children left running a parked case)."""
    limit = float(entry.get("timeout", 60.0))
    since = time.monotonic()
    heard: list[dict[str, Any]] = []
    parked: list[Parked] = []
    while True:
        pid, read = start(cases)
        end, more, detail, park = _collect(pid, read, limit, since, cut)
        heard.extend(more)
        if park is not None:
            parked.append(park)
        if end not in ("cut", "parked") or cut is None:
            return end, heard, detail, parked
        cut.killed = True
        # the cases it ran, cut or left running (parked)
        over = {m[kind] for m in more for kind in ("ran", "cut", "parked") if kind in m}
        cases = [c for c in cases if c not in over]
        if not cases:
            heard.append({"done": True})
            return "completed", heard, "", parked


def _switch(mutant: str) -> None:
    """Make ``mutant`` the active one in this process and in the children its cases start (``""``: none, the
    clean check). The name goes out in hex too: a child whose locale is not UTF-8 reads it back from there
    (``harness/sweep/mutants.py`` ``LOCALE_PROOF_NAME``)."""
    from harness.sweep.mutants import MUTANT_HEX_VARIABLE

    if mutant:
        from mutmut.mutation.trampoline import set_mutant_under_test

        set_mutant_under_test(mutant)
        os.environ[MUTANT_HEX_VARIABLE] = mutant.encode("utf-8").hex()
    else:
        os.environ.pop("MUTANT_UNDER_TEST", None)
        os.environ.pop(MUTANT_HEX_VARIABLE, None)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _STOP_FIRST and report.failed and _SESSION:
        # what --maxfail=1 sets: the session ends after this case, exit 1 (tests failed)
        _SESSION[0].shouldfail = f"stopped at the first killer ({report.nodeid})"
    if _PLAN and report.failed and report.nodeid not in _FAILED:
        _FAILED.append(report.nodeid)
        _send({"failed": report.nodeid})


def _send(message: dict[str, Any]) -> None:
    """One JSON line to the session, now: what a child killed at its time limit had already found."""
    if not _STREAM:
        return
    payload = (json.dumps(message) + "\n").encode()
    while payload:
        payload = payload[os.write(_STREAM[0], payload):]


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    if not _PLAN:
        return None
    if _BEFORE.get("done"):
        return True
    plan = json.loads(Path(_PLAN).read_text(encoding="utf-8"))
    _one_thread()
    items = {item.nodeid: item for item in session.items}
    durations: dict[str, float] = plan.get("durations", {})
    #: Killers of the mutants decided so far in this session, by function (``module.x_f``), newest last.
    killed_by: dict[str, list[str]] = {}
    with open(plan["out"], "a", encoding="utf-8") as out:
        emit = _emitter(out, killed_by)
        for entry in plan["mutants"]:
            neighbours = killed_by.get(function_of(entry["id"]), [])
            _run_entry(session, items, entry, durations, neighbours, _cut_for(entry, plan), emit)
        _drain_parked()
    return True


def function_of(mutant_id: str) -> str:
    """``pkg.mod.x_f__mutmut_3`` -> ``pkg.mod.x_f``: the mutants of one function are neighbours."""
    return mutant_id.rsplit("__mutmut_", 1)[0]


def kill_order(chosen: list[pytest.Item], durations: dict[str, float], neighbours: list[str]) -> list[pytest.Item]:
    """The cases in the order most likely to kill fast: those that killed a neighbouring mutant first
    (a test that caught ``a - b`` in ``add`` likely catches ``a * b``), then cheapest first by baseline
    duration; ties keep collection order (``sorted`` is stable). A case the baseline did not time sorts
    as the slowest."""
    seen = set(neighbours)
    slowest = max(durations.values(), default=0.0) + 1.0
    return sorted(chosen, key=lambda item: (item.nodeid not in seen, durations.get(item.nodeid, slowest)))


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


def short_failures(items: list[pytest.Item]) -> None:
    """A failure's report is one line, not a formatted traceback: a sweep reads WHICH cases failed, and
    formatting every failure of every mutant (sources, reprs, diffs) costs more than running the cases.

    Done on each item, through the two methods every pytest since 3 builds a failed report with
    (``repr_failure`` for the call, ``_repr_failure_py`` for setup and teardown): pytest 8's
    ``TestReport.from_item_and_call`` calls them inline, pytest 9's through ``_format_failed_longrepr``,
    which an earlier shortcut replaced and which pytest 8 does not have (there it silently did nothing).
    """
    for item in items:
        item.repr_failure = _one_line  # type: ignore[method-assign]
        item._repr_failure_py = _one_line  # type: ignore[attr-defined]


def _one_line(excinfo: Any, *args: Any, **kwargs: Any) -> str:
    return f"{excinfo.typename}: {str(excinfo.value)[:200]}"


def _run_entry(session: pytest.Session, items: dict[str, pytest.Item], entry: dict[str, Any],
               durations: dict[str, float], neighbours: list[str], cut: CaseCut | None,
               emit: Callable[[dict[str, Any]], None]) -> None:
    wanted = entry.get("cases")
    keep = None if wanted is None else set(wanted)
    chosen = kill_order([item for item in session.items if keep is None or item.nodeid in keep],
                        durations, neighbours)
    missing = [] if wanted is None else [i for i in wanted if i not in items]
    started = time.perf_counter()

    def start(cases: list[str]) -> tuple[int, int]:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            _child(entry["id"], [items[c] for c in cases], write, bool(entry.get("stop", False)))
        os.close(write)
        return pid, read

    end, heard, detail, parked = _until_done(start, [item.nodeid for item in chosen], entry, cut)
    place = {nodeid: index for index, nodeid in enumerate(items)}
    _settle(parked, end, heard, detail,
            lambda e, h, d: emit({**_result(entry, e, h, d, place, started), "missing": missing}))


def _result(entry: dict[str, Any], end: str, heard: list[dict[str, Any]], detail: str, place: dict[str, int],
            started: float) -> dict[str, Any]:
    """The entry's JSON line from what its child said; cases in ``place``'s (collection) order, whatever
    order they ran in: the same killers read the same way."""
    def ordered(names: Any) -> list[str]:
        return sorted(dict.fromkeys(names), key=lambda n: place.get(n, len(place)))

    cut = ordered(m["cut"] for m in heard if "cut" in m)  # killers too: they ran past their own limit
    failed = ordered([*(m["failed"] for m in heard if "failed" in m), *cut])
    ran = ordered([*(m["ran"] for m in heard if "ran" in m), *cut])
    if end == "completed" and not any(m.get("done") for m in heard):
        end, detail = "crash", "the child exited without saying it was done"
    missing = [n for m in heard for n in m.get("missing", ())]
    errors = [m["error"] for m in heard if "error" in m]
    return {"id": entry["id"], "end": end, "failed": failed, "ran": ran, "cut": cut, "missing": missing,
            "errors": errors,
            "wall": round(time.perf_counter() - started, 4), "detail": detail}


def _collect_and_run(session: pytest.Session, entry: dict[str, Any], neighbours: list[str],
                     durations: dict[str, float]) -> None:
    """In a child forked before collection, its mutant on: collect the files holding its cases ONE AT A
    TIME, the likeliest killer's file first (``file_order``), and run each file's cases (``kill_order``)
    before collecting the next, so a mutant killed in its first file never imports the others (a
    collection is most of such a child's time). A collection error makes the mutant an error: stopping at
    the first killer, it ends there; with every killer (``--all-killers``), the rest of its files are still
    collected, so each file it breaks is named, and no case runs after the first error (as in a session).
    Then it says which wanted cases were not collected, and exits."""
    code = 70
    try:
        wanted = entry.get("cases")
        keep = None if wanted is None else set(wanted)
        stop = bool(entry.get("stop", False))
        collected: set[str] = set()
        _FAILED.clear()
        # every case: the baseline's (``durations`` holds each) give the files
        for file in file_order(wanted if wanted is not None else list(durations), durations, neighbours):
            items = list(session.perform_collect([file]))
            collected.update(item.nodeid for item in items)
            if _BEFORE.get("broken"):
                if stop:
                    break
                continue  # the full kill matrix: every file it breaks is a killer; as in a session, none runs
            _run_cases(kill_order([i for i in items if keep is None or i.nodeid in keep], durations, neighbours),
                       stop, done=False)
            if stop and _FAILED:
                break
        else:
            _send({"missing": [] if wanted is None else [c for c in wanted if c not in collected]})
        _send({"done": True})
        code = 0
    finally:
        os._exit(code)


def file_order(cases: list[str], durations: dict[str, float], neighbours: list[str]) -> list[str]:
    """The files holding ``cases``, in the order ``kill_order`` would first reach one of their cases."""
    seen = set(neighbours)
    slowest = max(durations.values(), default=0.0) + 1.0
    ranked = sorted(cases, key=lambda nodeid: (nodeid not in seen, durations.get(nodeid, slowest)))
    return list(dict.fromkeys(nodeid.split("::", 1)[0] for nodeid in ranked))


def _child(mutant: str, chosen: list[pytest.Item], write: int, stop: bool) -> None:
    code = 70
    try:
        os.setpgid(0, 0)
        _STREAM.append(write)
        _switch(mutant)
        _FAILED.clear()
        _run_cases(chosen, stop)
        code = 0
    finally:  # whatever happens, the child must never return into the session
        os._exit(code)


def _run_cases(chosen: list[pytest.Item], stop: bool, done: bool = True) -> None:
    """Run ``chosen`` in order (stopping at the first failure when ``stop``), streaming each to the session
    (and, when ``done``, that the child is done)."""
    short_failures(chosen)
    for index, item in enumerate(chosen):
        # stopping early leaves this item's wider fixtures set up: the child exits without their teardown
        following = chosen[index + 1] if index + 1 < len(chosen) else None
        _send({"start": item.nodeid})
        item.ihook.pytest_runtest_protocol(item=item, nextitem=following)
        _send({"ran": item.nodeid})
        if stop and _FAILED:
            break
    if done:
        _send({"done": True})


def _collect(pid: int, read: int, timeout: float, since: float | None = None,
             cut: CaseCut | None = None) -> tuple[str, list[dict[str, Any]], str, Parked | None]:
    """The child's messages, read until it exits or ``timeout`` seconds after ``since`` (default: now) pass
    (then its group is killed): (end, every message heard, detail, the child if parked). A killed child's
    messages are kept: its failures stand. With a ``cut``, once a case has failed, the case running past
    ``PARK_AT`` of its own limit is left to run on (``"parked"``, a ``{"parked": nodeid}`` message heard)
    while the session holds fewer than ``MAX_PARKED``, else at its limit it ends the child (``"cut"``, a
    ``{"cut": nodeid}`` message heard). Parked children are watched meanwhile (``_watch_parked``)."""
    deadline = (time.monotonic() if since is None else since) + timeout
    buffer = b""
    heard: list[dict[str, Any]] = []
    killed = cut is not None and cut.killed
    running: tuple[str, float] | None = None  # the case the child runs, and when it started
    while True:
        now = time.monotonic()
        left = deadline - now
        if left <= 0:
            _kill(pid)
            os.close(read)
            return "timeout", heard, f"no result after {timeout:g} s; its process group was killed", None
        wait = min(left, 1.0, *(p.deadline - now for p in _PARKED))
        if cut is not None and killed and running is not None and running[0] in cut.limits:
            own = cut.limits[running[0]]
            over = running[1] + own - now
            if over <= 0:
                _kill(pid)
                os.close(read)
                heard.append({"cut": running[0]})
                return "cut", heard, f"{running[0]} ran past its own limit of {own:g} s", None
            park_in = running[1] + PARK_AT * own - now
            if park_in <= 0 and len(_PARKED) < MAX_PARKED:
                heard.append({"parked": running[0]})
                return "parked", heard, "", Parked(pid, read, running[0], running[1] + own, buffer)
            wait = min(wait, over, park_in if park_in > 0 else over)
        ready, _, _ = select.select([read, *(p.read for p in _PARKED)], [], [], max(0.0, wait))
        _watch_parked(set(ready))
        if read in ready:
            chunk = os.read(read, 65536)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for message in _parsed(lines):
                heard.append(message)
                killed = killed or "failed" in message
                if "start" in message:
                    running = (message["start"], time.monotonic())
                elif "ran" in message:
                    running = None
    os.close(read)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    try:
        os.killpg(pid, signal.SIGKILL)  # whatever the cases left behind in the group
    except (ProcessLookupError, PermissionError):
        pass
    if code != 0:
        why = f"killed by signal {-code}" if code < 0 else f"exited {code} before writing its result"
        return "crash", heard, why, None
    return "completed", heard, "", None


#: ``--all-killers``: a killed mutant's case still running after this share of its own limit is parked.
PARK_AT = 0.25
#: Parked children a session holds at most; past it a slow case is waited for (and cut) as before.
MAX_PARKED = 4


@dataclass
class Pending:
    """An entry whose line waits for its parked cases: what its other children said, and how to finish."""

    end: str
    heard: list[dict[str, Any]]
    detail: str
    #: Parked cases not ended yet.
    waiting: int
    #: ``(end, heard, detail) ->`` the entry's line written.
    finish: Callable[[str, list[dict[str, Any]], str], None]


@dataclass
class Parked:
    """A child left running one case of a killed mutant (``_collect``), watched until the case ends."""

    pid: int
    read: int
    case: str
    #: When the case reaches its own limit (then it is cut, a killer).
    deadline: float
    #: What the child sent after its last whole message when it was parked.
    buffer: bytes = b""
    owner: Pending | None = None


#: This session's parked children.
_PARKED: list[Parked] = []


def _settle(parked: list[Parked], end: str, heard: list[dict[str, Any]], detail: str,
            finish: Callable[[str, list[dict[str, Any]], str], None]) -> None:
    """Finish an entry now, or, when cases of it are parked, once the last of them has ended."""
    if not parked:
        finish(end, heard, detail)
        return
    pending = Pending(end, heard, detail, len(parked), finish)
    for child in parked:
        child.owner = pending
        _PARKED.append(child)
        _take(child, b"")  # what it had already sent may hold the case's end


def _watch_parked(ready: set[int]) -> None:
    """Read the parked children that sent something (``ready``), and cut those whose case reached its limit."""
    now = time.monotonic()
    for child in list(_PARKED):
        if child.read in ready:
            chunk = os.read(child.read, 65536)
            if not chunk:
                _ended(child, crash=f"{child.case}: its child exited before the case ended")
                continue
            _take(child, chunk)
        elif now >= child.deadline:
            _ended(child, message={"cut": child.case})


def _take(child: Parked, chunk: bytes) -> None:
    """The parked child's messages about ITS case, until the case ended (the child then goes on: it is killed)."""
    child.buffer += chunk
    *lines, child.buffer = child.buffer.split(b"\n")
    for message in _parsed(lines):
        if message.get("failed") == child.case:
            assert child.owner is not None
            child.owner.heard.append(message)
        elif message.get("ran") == child.case:
            _ended(child, message=message)
            return


def _ended(child: Parked, message: dict[str, Any] | None = None, crash: str = "") -> None:
    """The parked case ended (``message``: ran, or cut at its limit) or its child died (``crash``)."""
    _kill(child.pid)
    os.close(child.read)
    if child in _PARKED:
        _PARKED.remove(child)
    owner = child.owner
    assert owner is not None
    if message is not None:
        owner.heard.append(message)
    if crash and owner.end == "completed":
        owner.end, owner.detail = "crash", crash
    owner.waiting -= 1
    if owner.waiting == 0:
        owner.finish(owner.end, owner.heard, owner.detail)


def _drain_parked() -> None:
    """Wait for every parked case to end (the session's last entries are done)."""
    while _PARKED:
        wait = max(0.0, min(child.deadline for child in _PARKED) - time.monotonic())
        ready, _, _ = select.select([child.read for child in _PARKED], [], [], min(wait, 1.0))
        _watch_parked(set(ready))


def _parsed(lines: list[bytes]) -> list[dict[str, Any]]:
    found = []
    for line in lines:
        try:
            found.append(json.loads(line))
        except ValueError:
            continue
    return found


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
