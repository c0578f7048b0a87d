"""reports.results on its own: the defaults an older outcomes.json reads with, and the exact words of each refusal.

Written after a sweep of reports/results.py against the format and CLI tests left 97 of 344 mutants
alive: the recorded fixture has every key, so no default was ever read, and the messages were only
checked in part. With this file and test_report_formats.py: 333 of 344 killed, then two more tests;
the rest are equivalent (``bool(data.get(k, None))`` is ``bool(data.get(k, False))``; the file read
as ``UTF-8`` or in a UTF-8 locale's default; ``', '.join`` of the one readable schema).
Command: ``seamgate sweep reports/results.py --tests tests/reports/test_results.py --tests
tests/reports/test_report_formats.py --output /tmp/sw``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.outcome import ArmOutcome, CaseOutcome, Provenance, Report, RunOutcome, Verdict
from reports.results import KeptResult, ResultsError, load


def write(folder: Path, data: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "outcomes.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def refusal(path: Path) -> str:
    with pytest.raises(ResultsError) as caught:
        load(path)
    return str(caught.value)


def test_an_outcomes_json_with_only_the_required_keys_reads_with_the_models_defaults(tmp_path: Path):
    """What a reader of older results relies on: seamgate before durations, shards, sweeps and provenance."""
    minimal = {"schema": 1, "exit_code": 3, "outcomes": [
        {"gate": "g", "arm": "cpu-emulated", "verdict": "FAIL",
         "runs": [{"label": "mutation m cpu-emulated", "end": "completed",
                   "cases": [{"nodeid": "t::a", "kind": "failed"}]}]},
        {"gate": "g", "arm": "cuda", "verdict": "OWED"}]}
    kept = load(write(tmp_path / "old", minimal))
    run = RunOutcome("mutation m cpu-emulated", "completed", None, (CaseOutcome("t::a", "failed"),))
    assert kept.report == Report(outcomes=(ArmOutcome("g", "cpu-emulated", Verdict.FAIL, runs=(run,)),
                                           ArmOutcome("g", "cuda", Verdict.OWED)))
    assert (kept.exit_code, kept.shard, kept.plan, kept.sweep) == (3, None, "", None)
    assert kept.report.interrupted is False and kept.report.unfinished == () and kept.report.baseline_red == ()
    case = kept.report.outcomes[0].runs[0].cases[0]
    assert (case.message, case.assertions_passed, case.assertions_failed, case.duration, case.inferred) == ("", 0, 0, 0.0, False)
    assert (run.wall, run.session, run.detail, run.log) == (0.0, 0.0, "", "")
    outcome = kept.report.outcomes[0]
    assert (outcome.message, outcome.kind, outcome.title, outcome.provenance, dict(outcome.facts)) == ("", "", "", None, {})


def test_every_key_that_is_there_is_read(tmp_path: Path):
    full = {"schema": 1, "exit_code": 1, "interrupted": True, "unfinished": ["g2"], "shard": {"k": 2, "n": 3},
            "plan": "p" * 64, "baseline_red": [{"label": "b", "end": "crash", "exit_code": None, "detail": "SIGKILL"}],
            "outcomes": [{"gate": "g", "arm": "cuda", "verdict": "STALE", "message": "m", "kind": "rule", "title": "t",
                          "facts": {"x": 1}, "provenance": {"arm": "cuda", "device": "NVIDIA H200", "code_hash": "h"},
                          "runs": [{"label": "r", "end": "timeout", "exit_code": 2, "wall": 1.5, "session": 1.25,
                                    "detail": "d", "log": "l.txt",
                                    "cases": [{"nodeid": "t::a", "kind": "passed", "message": "é ✅",
                                               "assertions_passed": None, "assertions_failed": 2, "duration": 0.5,
                                               "inferred": True, "carried": True}]}]}]}
    kept = load(write(tmp_path / "full", full))
    assert kept.report.interrupted is True and kept.report.unfinished == ("g2",)
    assert kept.report.baseline_red == (RunOutcome("b", "crash", None, detail="SIGKILL"),)
    assert (kept.shard, kept.plan) == ((2, 3), "p" * 64)
    outcome = kept.report.outcomes[0]
    assert (outcome.message, outcome.kind, outcome.title, dict(outcome.facts)) == ("m", "rule", "t", {"x": 1})
    assert outcome.provenance == Provenance(arm="cuda", device="NVIDIA H200", code_hash="h")
    run = outcome.runs[0]
    assert (run.end, run.exit_code, run.wall, run.session, run.detail, run.log) == ("timeout", 2, 1.5, 1.25, "d", "l.txt")
    case = run.cases[0]
    assert (case.message, case.assertions_passed, case.assertions_failed, case.duration, case.inferred) == (
        "é ✅", None, 2, 0.5, True)
    assert getattr(case, "carried", True) is True


def test_a_label_names_the_folder_and_the_shard():
    report = Report()
    assert KeptResult(Path("/k/a/outcomes.json"), report, 0).label() == "/k/a"
    assert KeptResult(Path("/k/a/outcomes.json"), report, 0, shard=(2, 5)).label() == "/k/a (shard 2/5)"


def test_a_missing_latest_says_what_to_run_and_names_the_newest_sweep_only_for_latest(tmp_path: Path):
    runs = tmp_path / ".seamgate" / "runs"
    assert refusal(runs / "latest") == (f"{runs / 'latest'}: no such kept result; run `seamgate run` (or `seamgate "
                                        "sweep`) first, or name a folder listed in .seamgate/runs/")
    write(runs / "20260101T000000Z-1", {"schema": 1, "exit_code": 0, "outcomes": []})
    (runs / "latest-sweep").symlink_to("20260101T000000Z-1")
    assert refusal(runs / "latest").endswith(f".seamgate/runs/; the newest sweep is {runs / 'latest-sweep'}")
    assert refusal(runs / "20260101T000000Z-9").endswith("or name a folder listed in .seamgate/runs/")


def test_a_missing_latest_outside_seamgate_runs_is_still_a_missing_kept_result(tmp_path: Path):
    assert refusal(tmp_path / "artifacts" / "latest").startswith(f"{tmp_path / 'artifacts' / 'latest'}: no such kept result")


def test_a_missing_path_elsewhere_names_what_to_give(tmp_path: Path):
    assert refusal(tmp_path / "nowhere") == (f"{tmp_path / 'nowhere'}: no such file or folder; name a kept run folder "
                                             "(.seamgate/runs/<timestamp>) or its outcomes.json")
    assert "no such file or folder" in refusal(tmp_path / "latest-ish" / "x")


def test_a_folder_without_outcomes_json_is_named_with_the_fix(tmp_path: Path):
    assert refusal(tmp_path) == (f"{tmp_path}: no outcomes.json in this folder, so it is not a kept seamgate result "
                                 "(a folder that `seamgate run` keeps, e.g. .seamgate/runs/latest); name a kept run "
                                 "folder or its outcomes.json")


@pytest.mark.parametrize("text", ['[1, 2]', '{"outcomes": []}', '{"schema": 1}', '"schema"'])
def test_json_that_is_not_a_result_is_refused_whole(tmp_path: Path, text: str):
    path = tmp_path / "r.json"
    path.write_text(text)
    assert refusal(path) == (f"{path}: not a seamgate result (no 'schema' and 'outcomes' keys); name the "
                             "outcomes.json that `seamgate run` writes")


def test_a_file_that_is_not_json_or_not_utf8_is_refused(tmp_path: Path):
    path = tmp_path / "r.json"
    path.write_bytes(b"\xff\xfe<xml/>")
    assert refusal(path).startswith(f"{path}: not a seamgate result (not JSON: ")
    assert refusal(path).endswith("); name the outcomes.json that `seamgate run` writes")


def test_another_schema_version_says_which_one_and_what_to_do(tmp_path: Path):
    path = write(tmp_path, {"schema": 2, "exit_code": 0, "outcomes": []}) / "outcomes.json"
    assert refusal(tmp_path) == (f"{path}: result schema 2, this seamgate reads schema 1; render it with the "
                                 "seamgate that wrote it, or re-run `seamgate run` with this one")


def test_a_record_missing_a_required_key_is_not_a_readable_result(tmp_path: Path):
    write(tmp_path, {"schema": 1, "exit_code": 0, "outcomes": [{"gate": "g", "verdict": "PASS"}]})
    assert refusal(tmp_path) == f"{tmp_path / 'outcomes.json'}: not a readable seamgate result: 'arm'"
    write(tmp_path, {"schema": 1, "exit_code": 0, "outcomes": [{"gate": "g", "arm": "a", "verdict": "GREEN"}]})
    assert refusal(tmp_path).endswith("not a readable seamgate result: 'GREEN' is not a valid Verdict")
