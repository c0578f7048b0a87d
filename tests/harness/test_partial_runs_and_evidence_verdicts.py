"""A verdict taken from stored evidence says so in the table, and a partial run never replaces ``latest``.

``--arm cuda`` on a machine without a GPU judges every cuda arm from evidence: the table shows
``PASS (evidence <commit>)``, not a bare PASS that reads as measured here. A run of part of the
suite (``--arm``, ``--gate``, ``--shard``) keeps its results in its own folder and leaves
``.seamgate/runs/latest`` naming the last whole run, and says so.
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from harness.gates.model import RedSet
from harness.results.evidence import Record, resolve
from harness.results.workspace import latest
from reports.outcome import ArmOutcome, Provenance, Verdict
from reports.terminal import results_table
from tests.reports.fixture_projects import catalog, gate, mutation, run_quietly, write_project

H200 = Provenance(arm="cuda", device="NVIDIA H200", capability="9.0", driver="570", torch="2.11",
                  commit="abc1234def5678", code_hash="a" * 64)
OWED = ArmOutcome("g", "cuda", Verdict.OWED, "OWED: cuda arm needs an NVIDIA GPU")
MUTATIONS = catalog(mutation("add-off-by-one", "return a + b", "return a + b + 1"))


def table_text(outcomes: tuple[ArmOutcome, ...]) -> str:
    from reports.outcome import Report

    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(results_table(Report(outcomes=outcomes)))
    return out.getvalue()


def test_a_verdict_from_evidence_is_marked_in_the_table_with_its_commit() -> None:
    judged = resolve(OWED, [Record("g", "cuda", Verdict.PASS, "reds exactly x", H200, "evidence/h200.json")], lambda _: "a" * 64)
    text = table_text((judged, ArmOutcome("g", "cpu-emulated", Verdict.PASS, "reds exactly x")))
    assert "PASS (evidence abc1234def)" in text
    assert text.count("(evidence") == 1  # the arm measured here is a bare PASS


def test_a_partial_run_keeps_latest_naming_the_last_whole_run_and_says_so(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj")
    g = gate("g", mutation="add-off-by-one", red=RedSet(files=("tests/test_add.py",)))
    run_quietly(project, [g], MUTATIONS)
    whole = latest(project)
    assert whole is not None
    _, _, text = run_quietly(project, [g], MUTATIONS, arms=("cpu-emulated",))
    assert latest(project) == whole
    assert "partial run" in text and f"latest still names {whole.name}" in text
    _, _, text = run_quietly(project, [g], MUTATIONS, gate_ids=("g",))
    assert latest(project) == whole and "partial run" in text
    run_quietly(project, [g], MUTATIONS)
    assert latest(project) != whole
