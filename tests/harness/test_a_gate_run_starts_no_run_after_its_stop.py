"""A gate run's stop (SIGINT/SIGTERM, a row's error) refuses a run whose start it meets, as a sweep's does.

``Session.stop_runs`` (the row pool's ``on_stop``, ``harness/run/runner.py``) set ``stopping`` and killed the
launcher's runs in flight: a run past the ``stopping`` check but not yet held by the launcher was neither refused nor
killed, and the pool waited it out. It stops the run's executor now (``Executor.stop``: no run starts after it, one
submitted as it stops is killed), and the refusal reads as the interruption it is.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from harness.rows.executor import Executor, Run
from harness.run.runner import Session
from harness.run.signals import Interrupted
from tests.harness.stops import NAP, NAPPING, StoppedMidSubmit
from tests.reports.fixture_projects import shared_server, write_project


def test_a_run_submitted_as_the_gate_run_stops_is_killed_and_reads_as_the_interruption(tmp_path: Path) -> None:
    server = shared_server()
    tree = write_project(tmp_path / "p", NAPPING)
    session = Session.__new__(Session)  # the two methods under test need only these
    session.progress, session.tree_guard = None, None
    session.stopping = threading.Event()
    session.executor = Executor(StoppedMidSubmit(server, session.stop_runs), tmp_path / "w")  # type: ignore[arg-type]
    began = time.monotonic()
    with pytest.raises(Interrupted):
        session.execute(Run("nap", tree, ("tests/test_nap.py",), timeout=NAP * 2))
    assert time.monotonic() - began < 30, f"the run submitted as the gate run stopped ran on (it naps {NAP:g} s)"
    with pytest.raises(Interrupted):  # and nothing starts after it
        session.execute(Run("nap again", tree, ("tests/test_nap.py",), timeout=NAP * 2))
