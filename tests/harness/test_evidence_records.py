"""Which of several evidence records of one gate and arm counts, and a record that hashed no file (issue 28).

The rule (``harness/results/evidence.py``, ``resolve``): records are read in file-name order (each
file's outcomes in their order); the LAST one whose hash matches this tree counts, whatever comes
after it; a record that does not match never outweighs one that does; with no match the arm is
STALE, named after the last record. Each record is checked against this tree's hash over ITS files.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from harness.results.evidence import EvidenceError, Record, load_records, resolve
from reports.outcome import ArmOutcome, Provenance, Verdict
from tests.harness.posix_locale import run_in_posix_locale

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


def test_a_folder_gives_its_reports_in_name_order_and_a_named_file_is_read_as_named(tmp_path: Path) -> None:
    from harness.results.evidence import evidence_files

    _write(tmp_path, "b.json", "PASS", NOW)
    _write(tmp_path, "a.json", "PASS", NOW)
    (tmp_path / "kept.json").write_text("{}")
    assert evidence_files(tmp_path, ["kept.json", "evidence", "missing.json"]) == [
        (tmp_path / "kept.json", True), (tmp_path / "evidence/a.json", False), (tmp_path / "evidence/b.json", False)]


def test_other_json_in_a_folder_is_skipped_but_a_named_file_must_be_a_report(tmp_path: Path) -> None:
    _write(tmp_path, "a.json", "PASS", NOW)
    (tmp_path / "evidence" / "bench.json").write_text('{"outcomes": [], "ratio": 1.2}')  # no schema: not a report
    (tmp_path / "evidence" / "table.json").write_text('{"schema": 1}')  # no outcomes: not a report
    (tmp_path / "evidence" / "list.json").write_text('[1, 2]')
    assert [r.source for r in load_records(tmp_path, ["evidence"])[("g", "cuda")]] == ["evidence/a.json"]
    (tmp_path / "evidence" / "figures.json").write_text('{"ratio": 1.2}')
    with pytest.raises(EvidenceError) as named:
        load_records(tmp_path, ["evidence/figures.json"])
    assert str(named.value).endswith("evidence files are written by `seamgate run --json FILE` — fix or remove it")
    assert str(named.value).startswith("evidence/figures.json: not a seamgate JSON report (KeyError: 'outcomes')")


def test_a_record_keeps_its_message_and_an_absent_message_is_empty(tmp_path: Path) -> None:
    _write(tmp_path, "a.json", "PASS", NOW)
    report = json.loads((tmp_path / "evidence/a.json").read_text())
    del report["outcomes"][0]["message"]
    (tmp_path / "evidence/b.json").write_text(json.dumps(report))
    assert [r.message for r in load_records(tmp_path, ["evidence"])[("g", "cuda")]] == ["a.json", ""]


def test_an_evidence_file_outside_the_project_is_named_by_its_full_path(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    outside = tmp_path / "elsewhere.json"
    outside.write_text('{"schema": 1, "outcomes": [{"gate": "g", "arm": "cuda", "verdict": "PASS", '
                       '"provenance": {"arm": "cuda", "device": "d", "code_hash": "a", "hashed_files": []}}]}')
    with pytest.raises(EvidenceError) as error:
        load_records(project, [str(outside)])
    assert str(error.value) == (
        f"{outside}: the record of gate g arm cuda says its code hash read no file (hashed_files is empty): a hash "
        "over nothing matches nothing it measured; re-measure that arm, or remove the record")


def test_an_evidence_file_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    """A CI runner under the POSIX locale with locale coercion off reads files as ASCII unless told UTF-8."""
    _write(tmp_path, "a.json", "PASS", NOW)
    report = json.loads((tmp_path / "evidence/a.json").read_text())
    report["outcomes"][0]["message"] = "reds exactly — café"
    (tmp_path / "evidence/a.json").write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    code = ("import sys; from pathlib import Path; from harness.results.evidence import load_records\n"
            "r = load_records(Path(sys.argv[1]), ['evidence'])[('g', 'cuda')][0]\n"
            "print(ascii(r.message))")
    assert run_in_posix_locale(code, str(tmp_path)) == ascii("reds exactly — café")


def test_a_verdict_from_a_record_carries_its_provenance_and_where_it_came_from(tmp_path: Path) -> None:
    owed = dataclasses.replace(ROCM_OWED, facts={"kept": 1})
    asked: list[Provenance] = []
    out = resolve(owed, [Record("g", "rocm", Verdict.FAIL, "2 of 3 red", MI300X, "evidence/r.json")],
                  lambda p: asked.append(p) or "a" * 64)
    assert asked == [MI300X]
    assert out.verdict is Verdict.FAIL and out.provenance == MI300X
    assert out.facts == {"kept": 1, "evidence": {"commit": "abc1234def", "source": "evidence/r.json"}}
    assert out.message == ("measured on AMD Instinct MI300X, sm 9.4, driver 6.2, torch 2.11, commit abc1234def "
                           "[evidence/r.json]: 2 of 3 red")


def test_a_stale_verdict_names_the_record_its_machine_and_both_hashes_exactly(tmp_path: Path) -> None:
    asked: list[Provenance] = []
    old = dataclasses.replace(MI300X, commit="0123456789abcdef", code_hash="0123456789abcdef" * 4)
    out = resolve(ROCM_OWED, [Record("g", "rocm", Verdict.PASS, "ok", old, "evidence/r.json")],
                  lambda p: asked.append(p) or "fedcba9876543210" * 4)
    assert asked == [old, old] and out.verdict is Verdict.STALE and out.provenance == old
    assert out.message == (
        "STALE: PASS measured on AMD Instinct MI300X, sm 9.4, driver 6.2, torch 2.11, commit 0123456789 "
        "[evidence/r.json] for code 0123456789ab, the code under test is now fedcba987654; re-run this arm on "
        f"that hardware ({ROCM_OWED.message})")


def test_a_record_that_names_only_its_device_says_so_and_an_unknown_commit_is_unknown() -> None:
    bare = Provenance(arm="rocm", device="", code_hash="a" * 64)
    out = resolve(ROCM_OWED, [Record("g", "rocm", Verdict.PASS, "ok", bare, "evidence/r.json")], lambda _: "a" * 64)
    assert out.message == "measured on ?, commit unknown [evidence/r.json]: ok"


def test_a_named_file_without_a_schema_is_refused_not_read_as_no_records(tmp_path: Path) -> None:
    (tmp_path / "outcomes.json").write_text('{"outcomes": []}')  # a report has its schema: this one is not
    with pytest.raises(EvidenceError) as named:
        load_records(tmp_path, ["outcomes.json"])
    assert str(named.value).startswith("outcomes.json: not a seamgate JSON report (ValueError: no 'schema' key)")
