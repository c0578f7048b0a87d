"""G5 evidence: an arm this machine cannot run is judged by what another machine measured of THIS code."""

from __future__ import annotations

import json
from pathlib import Path

from harness.results.evidence import evidence_hash, gate_hash, load_records
from harness.exit_codes import ExitCode
from harness.gates.model import RedSet
from harness.results.platforms import code_under_test
from reports.outcome import Verdict
from tests.reports.fixture_projects import catalog, gate, mutation, run_quietly, write_project

MUT_ADD = mutation("add-off-by-one", "return a + b", "return a + b + 1")
MUTATIONS = catalog(MUT_ADD)


def _gate(select: tuple[str, ...], arms: tuple[str, ...]):
    return gate("g", mutation="add-off-by-one", select=select, red=RedSet(files=("tests/test_add.py",)), arms=arms)


def _run(project: Path, select: tuple[str, ...] = ("tests",), **options):
    report, code, _ = run_quietly(project, [_gate(select, ("cpu-emulated", "rocm"))], MUTATIONS, **options)
    return {o.arm: o for o in report.outcomes}, code


def _record_rocm_evidence(project: Path, report: Path, select: tuple[str, ...], *, older: bool = False) -> None:
    """What a ROCm machine would have written: the same gate's outcome, measured there on this code. A
    record hashes the gate as judged for ITS arm (what a machine running ``--arm rocm`` computes), over
    the files the cpu-emulated run reached. ``older``: as an older seamgate wrote it (no file list, every
    code file byte for byte)."""
    data = json.loads(report.read_text())
    measured = dict(data["outcomes"][0], arm="rocm")
    provenance = dict(measured["provenance"], arm="rocm", device="AMD Instinct MI300X")
    if older:
        del provenance["hashed_files"]
        provenance["code_hash"] = gate_hash(project, _gate(select, ("rocm",)), MUT_ADD, code_under_test(project))
    else:
        provenance["code_hash"], _ = evidence_hash(project, _gate(select, ("rocm",)), MUT_ADD,
                                                   provenance["hashed_files"], code_under_test(project))
    measured["provenance"] = provenance
    (project / "evidence").mkdir()
    (project / "evidence" / "rocm.json").write_text(json.dumps(dict(data, outcomes=[measured])))


def test_a_measured_arm_is_judged_from_evidence_and_turns_stale_when_the_code_changes(tmp_path):
    project = write_project(tmp_path / "proj")
    first, _ = _run(project, json=tmp_path / "r.json")
    assert first["rocm"].verdict is Verdict.OWED
    _record_rocm_evidence(project, tmp_path / "r.json", ("tests",))

    now, code = _run(project, evidence=load_records(project, ["evidence"]))
    assert now["rocm"].verdict is Verdict.PASS and "measured on AMD Instinct MI300X" in now["rocm"].message
    assert code is ExitCode.OK

    ops = project / "calc" / "ops.py"
    ops.write_text(ops.read_text() + "\n\nLIMIT = 10  # a statement added to the code under test\n")
    later, code = _run(project, evidence=load_records(project, ["evidence"]), fail_on_owed=True)
    assert later["rocm"].verdict is Verdict.STALE and code is ExitCode.OWED


def test_evidence_turns_stale_when_the_selected_test_file_changes(tmp_path: Path) -> None:
    select = ("tests/test_add.py",)
    project = write_project(tmp_path / "proj")
    _run(project, select, json=tmp_path / "r.json")
    _record_rocm_evidence(project, tmp_path / "r.json", select)
    now, _ = _run(project, select, evidence=load_records(project, ["evidence"]))
    assert now["rocm"].verdict is Verdict.PASS
    test = project / "tests" / "test_add.py"
    test.write_text(test.read_text() + "\n\ndef test_added_later():\n    assert add(2, 2) == 4\n")
    later, code = _run(project, select, evidence=load_records(project, ["evidence"]), fail_on_owed=True)
    assert later["rocm"].verdict is Verdict.STALE and code is ExitCode.OWED


def test_a_record_with_no_file_list_is_checked_against_every_code_file_byte_for_byte(tmp_path: Path) -> None:
    """An older seamgate's record: its hash read every file under the code roots as bytes, so it stands on
    the same tree and a comment added to any code file makes it STALE (the fallback hashes no less)."""
    project = write_project(tmp_path / "proj")
    _run(project, json=tmp_path / "r.json")
    _record_rocm_evidence(project, tmp_path / "r.json", ("tests",), older=True)
    assert "hashed_files" not in json.loads((project / "evidence" / "rocm.json").read_text())["outcomes"][0]["provenance"]
    now, _ = _run(project, evidence=load_records(project, ["evidence"]))
    assert now["rocm"].verdict is Verdict.PASS
    ops = project / "calc" / "ops.py"
    ops.write_text(ops.read_text() + "# only a comment\n")
    later, _ = _run(project, evidence=load_records(project, ["evidence"]))
    assert later["rocm"].verdict is Verdict.STALE
