"""A sweep's batches run in the row pool (``harness/rows/pool.py``) the gates' rows run in: an interrupt kills the
sessions in flight, and every batch that ended before it is already kept (a row of the sweep's run folder) and was
reported decided."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

from harness.sweep.kept_outcomes import KeptOutcomes, mutant_label
from harness.sweep.cli import _interrupt
from harness.sweep.mutants import Mutant
from harness.sweep.sweep import Planned, Sweep, SweepOptions, _outcome
from reports.outcome import RunOutcome


class Launcher:
    """Stands in for the fork server: records that the sweep killed its sessions."""

    def __init__(self) -> None:
        self.killed = threading.Event()

    def kill_all(self) -> None:
        self.killed.set()


def planned(file: str) -> Planned:
    mutant = Mutant(id=f"{file[:-3]}.x_f__mutmut_1", file=file, line=1, column=0, end_line=1, end_column=1,
                    mutator="number", text="", diff="", function="x_f", function_source="")
    return Planned(mutant=mutant, cases=frozenset({"tests/test_a.py::test_a"}), alone=False, digest=f"digest-{file}")


def test_an_interrupted_sweep_kills_its_sessions_and_keeps_the_batches_that_ended(tmp_path: Path, monkeypatch) -> None:
    launcher = Launcher()
    events: list[tuple[str, Any]] = []
    sweep = Sweep(tmp_path, SweepOptions(paths=(".",), jobs=2, progress="off"), launcher=launcher,
                  notify=lambda event, data: events.append((event, data)))
    sweep.launcher = launcher  # as ``Sweep.run`` sets it
    sweep._digests = {"a.x_f__mutmut_1": "digest-a.py", "b.x_f__mutmut_1": "digest-b.py"}
    sweep.kept = tmp_path / "kept"  # as ``Sweep.run`` makes them
    sweep.kept.mkdir()
    sweep.outcomes = KeptOutcomes(tmp_path, sweep.kept, {}, fresh=False)
    monkeypatch.setattr(sweep, "trampolined_tree", lambda files: tmp_path)
    first_decided = threading.Event()

    def run_batch(index: int, batch: list[Planned], tree: Path, before: bool, shared: Any) -> dict[str, Any]:
        if batch[0].mutant.file == "a.py":
            return {p.mutant.id: _outcome(p.mutant, "killed", killers=("tests/test_a.py::test_a",)) for p in batch}
        # the other session is still running when SIGTERM comes; it ends only when the sweep kills it
        assert first_decided.wait(30), "the premise: the first batch was reported before the interrupt"
        os.kill(os.getpid(), signal.SIGTERM)
        assert launcher.killed.wait(30), "the interrupted sweep did not kill its sessions"
        return {p.mutant.id: _outcome(p.mutant, "owed", reason="killed") for p in batch}

    monkeypatch.setattr(sweep, "run_batch", run_batch)
    original = sweep.remember
    monkeypatch.setattr(sweep, "remember", lambda found: (original(found), first_decided.set()))
    previous = signal.signal(signal.SIGTERM, _interrupt)  # as ``seamgate sweep`` installs it
    try:
        baseline = RunOutcome("sweep baseline", "completed", 0, ())
        try:
            sweep.execute([planned("a.py"), planned("b.py")], baseline)
        except KeyboardInterrupt:
            pass
        else:
            raise AssertionError("the sweep was not interrupted")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert launcher.killed.is_set()
    rows = json.loads((sweep.kept / "rows.json").read_text(encoding="utf-8"))["rows"]
    assert rows[mutant_label("a.x_f__mutmut_1")] == {
        "digest": "digest-a.py", "run": {"status": "killed", "killers": ["tests/test_a.py::test_a"], "covered_by": [],
                                         "inferred": 0, "reason": "", "wall": 0.0}}
    assert mutant_label("b.x_f__mutmut_1") not in rows
    assert [[o.id for o in data] for event, data in events if event == "decided"] == [["a.x_f__mutmut_1"]]
