"""Which of several evidence records of one gate and arm counts, and a record that hashed no file (issue 28).

The rule (``harness/results/evidence.py``, ``resolve``): records are read in file-name order (each
file's outcomes in their order); the LAST one whose hash matches this tree counts, whatever comes
after it; a record that does not match never outweighs one that does; with no match the arm is
STALE, named after the last record. Each record is checked against this tree's hash over ITS files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.results.evidence import EvidenceError, Record, load_records, resolve
from reports.outcome import ArmOutcome, Provenance, Verdict

OWED = ArmOutcome("g", "cuda", Verdict.OWED, "OWED: cuda arm needs an NVIDIA GPU")
NOW, BEFORE = "a" * 64, "b" * 64
#: A record of another machine: its device, driver and commit are named in the message (moved from test_evidence.py,
#: whose other cases start runs, so that a sweep of evidence.py runs these alone).
MI300X = Provenance(arm="rocm", device="AMD Instinct MI300X", capability="9.4", driver="6.2", torch="2.11",
                    commit="abc1234def", code_hash="a" * 64)
ROCM_OWED = ArmOutcome("g", "rocm", Verdict.OWED, "OWED: rocm arm needs an AMD GPU with a ROCm build of torch")


def _write(project: Path, name: str, verdict: str, code_hash: str, files: list[str] | None = None,
           commit: str = "c0ffee") -> None:
    provenance = {"arm": "cuda", "device": "NVIDIA H200", "commit": commit, "code_hash": code_hash}
    if files is not None:
        provenance["hashed_files"] = files
    outcome = {"gate": "g", "arm": "cuda", "verdict": verdict, "message": name, "provenance": provenance}
    (project / "evidence").mkdir(exist_ok=True)
    (project / "evidence" / name).write_text(json.dumps({"schema": 1, "outcomes": [outcome]}))


def _judge(project: Path) -> ArmOutcome:
    records = load_records(project, ["evidence"])[("g", "cuda")]
    return resolve(OWED, records, lambda p: NOW)


def test_a_later_record_of_other_code_does_not_make_a_matching_records_verdict_stale(tmp_path: Path) -> None:
    _write(tmp_path, "a.json", "PASS", NOW)
    _write(tmp_path, "b.json", "FAIL", BEFORE)
    out = _judge(tmp_path)
    assert out.verdict is Verdict.PASS and "[evidence/a.json]" in out.message


def test_a_matching_record_counts_over_an_earlier_one_of_other_code(tmp_path: Path) -> None:
    _write(tmp_path, "a.json", "PASS", BEFORE)
    _write(tmp_path, "b.json", "FAIL", NOW)
    out = _judge(tmp_path)
    assert out.verdict is Verdict.FAIL and "[evidence/b.json]" in out.message


def test_of_two_matching_records_the_last_in_file_name_order_counts_not_the_last_written(tmp_path: Path) -> None:
    _write(tmp_path, "b.json", "FAIL", NOW)
    _write(tmp_path, "a.json", "PASS", NOW)
    os.utime(tmp_path / "evidence" / "b.json", (1, 1))  # b.json is the older file on disk: the name decides
    out = _judge(tmp_path)
    assert out.verdict is Verdict.FAIL and "[evidence/b.json]" in out.message


def test_with_no_matching_record_the_arm_is_stale_and_names_the_last_record(tmp_path: Path) -> None:
    _write(tmp_path, "a.json", "PASS", BEFORE)
    _write(tmp_path, "b.json", "PASS", "c" * 64)
    out = _judge(tmp_path)
    assert out.verdict is Verdict.STALE
    assert "[evidence/b.json] for code cccccccccccc, the code under test is now aaaaaaaaaaaa" in out.message


def test_each_record_is_checked_against_this_trees_hash_over_its_own_files(tmp_path: Path) -> None:
    _write(tmp_path, "a.json", "PASS", "hash over dense", ["drivers/dense.py"])
    _write(tmp_path, "b.json", "FAIL", "hash over moe as measured", ["drivers/moe.py"])
    today = {("drivers/dense.py",): "hash over dense", ("drivers/moe.py",): "hash over moe now"}
    asked: list[tuple[str, ...] | None] = []

    def current(p: Provenance) -> str:
        asked.append(p.hashed_files)
        return today[p.hashed_files or ()]

    out = resolve(OWED, load_records(tmp_path, ["evidence"])[("g", "cuda")], current)
    assert out.verdict is Verdict.PASS and "[evidence/a.json]" in out.message
    assert set(asked) == {("drivers/dense.py",), ("drivers/moe.py",)}


def test_a_record_whose_hash_read_no_file_is_an_error_naming_the_file(tmp_path: Path) -> None:
    _write(tmp_path, "a.json", "PASS", NOW, files=[])
    with pytest.raises(EvidenceError, match=r"evidence/a.json: the record of gate g arm cuda says its code hash read no file"):
        load_records(tmp_path, ["evidence"])


def test_a_record_whose_file_list_is_not_a_list_of_paths_is_not_a_report(tmp_path: Path) -> None:
    _write(tmp_path, "a.json", "PASS", NOW, files="drivers/dense.py")  # type: ignore[arg-type]
    with pytest.raises(EvidenceError, match=r"evidence/a.json: not a seamgate JSON report \(TypeError: provenance hashed_files"):
        load_records(tmp_path, ["evidence"])


def test_a_record_of_the_same_code_stands_and_names_the_device_and_the_file():
    out = resolve(ROCM_OWED, [Record("g", "rocm", Verdict.PASS, "reds exactly x", MI300X, "evidence/r.json")], lambda _: "a" * 64)
    assert out.verdict is Verdict.PASS and out.provenance == MI300X
    assert out.message.startswith("measured on AMD Instinct MI300X, sm 9.4, driver 6.2, torch 2.11, commit abc1234def [evidence/r.json]")


def test_a_record_of_other_code_is_stale_never_carried_forward():
    out = resolve(ROCM_OWED, [Record("g", "rocm", Verdict.PASS, "ok", MI300X, "evidence/r.json")], lambda _: "b" * 64)
    assert out.verdict is Verdict.STALE
    assert "for code aaaaaaaaaaaa, the code under test is now bbbbbbbbbbbb" in out.message


def test_without_a_record_the_arm_stays_owed():
    assert resolve(ROCM_OWED, [], lambda _: "a" * 64) is ROCM_OWED


def test_a_broken_evidence_report_is_a_usage_error_naming_the_file(tmp_path):
    (tmp_path / "evidence").mkdir()
    (tmp_path / "evidence" / "bad.json").write_text('{"schema": 1, "outcomes": [{"gate": "g", "provenance": {"arm": "cuda"}}]}')
    (tmp_path / "evidence" / "bench.json").write_text('{"ratio": 1.2}')  # not a report: ignored
    with pytest.raises(EvidenceError, match=r"evidence/bad.json: not a seamgate JSON report \(KeyError"):
        load_records(tmp_path, ["evidence"])
