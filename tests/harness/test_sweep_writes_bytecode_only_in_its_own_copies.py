"""The sweep's runs write bytecode into the sweep's own copies (issue 26: a child forked before collection
then loads the test files and the trampolined module compiled and assertion-rewritten once, not again per
mutant), never into the project's tree; a mutant run in a session of its own writes none (its copy goes when
that one session ends, so nothing written there would be read again; dropping the copy's stale bytecode of the
mutated file is ``write_mutant``'s job)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mutmut", reason="mutmut 3 is in the test extra (pip install -e '.[test]')")

from harness.rows.executor import Executor  # noqa: E402
from tests.harness.test_sweep_before_collection import TABLE  # noqa: E402
from tests.reports.fixture_projects import sweep_calc, write_project  # noqa: E402

pytestmark = pytest.mark.slow


def test_the_sweeps_runs_write_bytecode_in_their_copies_and_not_in_the_project(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = []
    original = Executor.execute

    def recording(self, run):  # noqa: ANN001, ANN202 - Executor.execute's shape
        runs.append((run.label, run.write_bytecode))
        return original(self, run)

    monkeypatch.setattr(Executor, "execute", recording)
    # a conftest importing the swept module sends its import-time mutants to sessions of their own
    root = write_project(tmp_path / "calc", {**TABLE, "conftest.py": "import calc.table  # noqa: F401\n"})
    sweep_calc(root)
    alone = [w for label, w in runs if label.startswith("sweep alone")]
    shared = [w for label, w in runs if not label.startswith("sweep alone")]
    assert alone and shared, runs  # the premise: both kinds ran
    assert set(shared) == {True} and set(alone) == {False}, runs
    assert not list(root.rglob("*.pyc")), "bytecode written into the project's own tree"
