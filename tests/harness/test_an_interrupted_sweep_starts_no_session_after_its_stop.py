"""An interrupted sweep starts no session after its stop; a session killed before it started dies as it starts.

The row pool (``harness/rows/pool.py``) waits for every thunk to end. A batch whose session the stop killed goes on to
its next session (``Sweep.run_alone`` runs a batch's mutants one after another): were that one started, the pool would
wait it out, and SIGTERM would not end the sweep. The stop is the run's executor's (``Executor.stop``), not its
launcher's: a launcher may be shared (these tests share one fork server) and runs the next run's sessions.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from harness.rows.executor import Executor, Run
from harness.rows.forkserver import FreshInterpreter
from harness.sweep.cli import _interrupt
from harness.sweep.kept_outcomes import KeptOutcomes
from harness.sweep.mutants import Mutant
from harness.sweep.sweep import Planned, Sweep, SweepOptions
from reports.outcome import RunOutcome
from tests.harness.stops import NAP, NAPPING, StoppedMidSubmit
from tests.reports.fixture_projects import shared_server, write_project


def planned(file: str, n: int = 1) -> Planned:
    mutant = Mutant(id=f"{file[:-3]}.x_f__mutmut_{n}", file=file, line=1, column=0, end_line=1, end_column=1,
                    mutator="number", text="", diff="", function="x_f", function_source="")
    return Planned(mutant=mutant, cases=frozenset({"tests/test_nap.py::test_nap"}), alone=False, digest=f"d-{file}-{n}")


def started(marker: Path) -> int:
    return marker.read_text().count("started") if marker.exists() else 0


@pytest.mark.parametrize("kind", ["fork server", "fresh interpreter"])
def test_an_interrupted_sweep_refuses_the_next_session_of_a_batch_whose_session_it_killed(tmp_path: Path, monkeypatch,
                                                                                         kind: str) -> None:
    launcher = shared_server() if kind == "fork server" else FreshInterpreter()
    tree = write_project(tmp_path / "p", NAPPING)
    marker = tmp_path / "marker"
    sweep = Sweep(tmp_path, SweepOptions(paths=(".",), jobs=2, progress="off"), launcher=launcher)
    sweep.kept = tmp_path / "kept"  # as ``Sweep.run`` makes them
    sweep.kept.mkdir()
    sweep.launcher, sweep.executor = launcher, Executor(launcher, sweep.kept)
    sweep.outcomes = KeptOutcomes(tmp_path, sweep.kept, {}, fresh=False)
    monkeypatch.setattr(sweep, "trampolined_tree", lambda files: tree)
    refused: list[BaseException] = []
    decided: list[Any] = []

    def run_batch(index: int, batch: list[Planned], tree: Path, before: bool, shared: Any) -> dict[str, Any]:
        if batch[0].mutant.file == "b.py":  # the interrupt, once the other batch's first session runs
            deadline = time.monotonic() + 60
            while not started(marker) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert started(marker) == 1, "the premise: the other batch's first session runs when SIGTERM comes"
            os.kill(os.getpid(), signal.SIGTERM)
            return {}
        for p in batch:  # a session per mutant, one after another, as ``run_alone`` runs them
            try:
                sweep._execute(label=f"nap {p.mutant.id}", tree=tree, select=("tests/test_nap.py",),
                               env={"MARKER": str(marker)}, timeout=NAP * 2)
            except BaseException as exc:
                refused.append(exc)
                raise
        return {p.mutant.id: None for p in batch}

    monkeypatch.setattr(sweep, "run_batch", run_batch)
    monkeypatch.setattr(sweep, "remember", decided.append)
    previous = signal.signal(signal.SIGTERM, _interrupt)  # as ``seamgate sweep`` installs it
    began = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            sweep.execute([planned("a.py", 1), planned("a.py", 2), planned("b.py")],
                          RunOutcome("sweep baseline", "completed", 0, ()))
    finally:
        signal.signal(signal.SIGTERM, previous)
        launcher.kill_all()  # a session this test failed to stop ends with it
    took = time.monotonic() - began
    assert took < 30, f"the interrupted sweep waited {took:.0f} s for its batches (a session naps {NAP:g} s)"
    assert started(marker) == 1, "a session started after the stop"
    from harness.rows.executor import RunsStopped  # here, so that before the fix this test fails on the wait

    assert [type(e) for e in refused] == [RunsStopped] and "not started" in str(refused[0]), refused
    assert decided == [], "a batch that did not end was decided"
    # the launcher is the next run's too: the stop was this run's executor's
    again = Executor(launcher, tmp_path / "again").execute(Run("again", tree, ("tests/test_nap.py",), timeout=60))
    assert again.end == "completed" and [c.kind for c in again.cases] == ["passed"], again


def test_a_session_killed_before_its_pid_came_is_killed_as_it_starts(tmp_path: Path) -> None:
    server = shared_server()
    request = {"mode": "call", "target": "time:sleep", "arg": NAP, "cwd": str(tmp_path), "env": {},
               "stdout": str(tmp_path / "out"), "stderr": str(tmp_path / "err"), "result": str(tmp_path / "result")}
    handle = server.submit(request)
    with server.lock:  # the reader looks the handle up under this lock before it hands it its pid
        assert handle.pid is None, "the premise: the kill comes before the server said the session started"
        handle.kill()
    assert handle.wait(10), f"a session killed before its pid came ran on (it naps {NAP:g} s)"
    assert handle.status == -signal.SIGKILL


def test_a_session_submitted_while_its_executor_stops_is_killed(tmp_path: Path) -> None:
    from harness.rows.executor import RunsStopped  # here, as above

    server = shared_server()
    tree = write_project(tmp_path / "p", NAPPING)
    marker = tmp_path / "marker"

    executor = Executor(StoppedMidSubmit(server, lambda: executor.stop()), tmp_path / "w")  # type: ignore[arg-type]
    began = time.monotonic()
    with pytest.raises(RunsStopped, match="killed as it started"):
        executor.execute(Run("nap", tree, ("tests/test_nap.py",), env={"MARKER": str(marker)}, timeout=NAP * 2))
    assert time.monotonic() - began < 30, f"the run submitted as its executor stopped ran on (it naps {NAP:g} s)"
