"""A long sweep in a CI log: besides a line per finished file, a line at most every ``every`` seconds
with how many mutants are decided of how many, by status, so a 40-minute sweep is not two lines."""

from __future__ import annotations

from types import SimpleNamespace

from harness.sweep import cli as sweep_cli
from harness.sweep.cli import Progress


def planned(file: str, n: int) -> list[SimpleNamespace]:
    return [SimpleNamespace(mutant=SimpleNamespace(file=file)) for _ in range(n)]


def decided(file: str, *statuses: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(file=file, status=s) for s in statuses]


def test_between_files_a_line_says_how_many_mutants_are_decided_of_how_many(capsys, monkeypatch):
    clock = iter([0.0, 10.0, 40.0, 41.0, 90.0])
    monkeypatch.setattr(sweep_cli.time, "perf_counter", lambda: next(clock))
    progress = Progress("lines", every=30.0)
    progress.notify("planned", planned("seam/a.py", 4) + planned("seam/b.py", 2))
    progress.notify("decided", decided("seam/a.py", "killed"))            # 10 s: too soon for a line
    progress.notify("decided", decided("seam/a.py", "survived"))          # 40 s: a line
    progress.notify("decided", decided("seam/a.py", "killed", "killed"))  # the file's own line
    progress.notify("decided", decided("seam/b.py", "killed"))            # 90 s: a line
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "sweep: 6 mutants to run (2 files)"
    assert lines[1] == "sweep: 2 of 6 mutants decided (1 killed, 1 survived), 40 s"
    assert lines[2].startswith("sweep: seam/a.py: 4 run (3 killed, 1 survived)")
    assert lines[3] == "sweep: 5 of 6 mutants decided (4 killed, 1 survived), 90 s"
    assert len(lines) == 4
