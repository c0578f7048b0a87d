"""`seamgate report`: which paths it reads, the errors that name the path and the fix, --out, the job
summary, and --merge of shard parts (a missing, duplicated or mismatched shard fails the merge by name)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.exit_codes import ExitCode
from harness.gates.model import RedSet
from reports.json_out import plan_digest, write_json
from reports.outcome import ArmOutcome, Report, Verdict

RECORDED = Path(__file__).parent / "recorded"
PLAN = plan_digest([("g1", "cpu-emulated"), ("g2", "cpu-emulated"), ("g3", "cpu-emulated")])


def part(folder: Path, k: int | None, n: int = 3, *, plan: str = PLAN, verdict: Verdict = Verdict.PASS,
         exit_code: int = 0) -> Path:
    """A kept shard folder holding gate ``g<k>``."""
    report = Report(outcomes=(ArmOutcome(f"g{k or 0}", "cpu-emulated", verdict, f"{verdict.value} of g{k}"),))
    write_json(folder / "outcomes.json", report, exit_code, shard=(k, n) if k else None, plan=plan)
    return folder


def report(*args: str) -> int:
    return main(["report", *args])


def test_with_no_results_named_it_reads_the_latest_kept_run(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / ".seamgate" / "runs"
    part(runs / "20260101T000000Z-1", None)
    (runs / "latest").symlink_to("20260101T000000Z-1")
    assert report("--format", "md") == ExitCode.OK
    assert capsys.readouterr().out.startswith("## seamgate: 1 PASS -> exit OK")


def test_a_missing_latest_says_to_run_seamgate_run_first(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert report() == ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert ".seamgate/runs/latest: no such kept result; run `seamgate run`" in err and "Traceback" not in err
    part(tmp_path / ".seamgate" / "runs" / "20260101T000000Z-2", None)
    (tmp_path / ".seamgate" / "runs" / "latest-sweep").symlink_to("20260101T000000Z-2")
    assert report() == ExitCode.USAGE_ERROR
    assert "the newest sweep is .seamgate/runs/latest-sweep" in capsys.readouterr().err


@pytest.mark.parametrize("make, words", [
    (lambda p: p.mkdir(), "no outcomes.json in this folder"),
    (lambda p: p.write_text("<testsuites/>"), "not a seamgate result (not JSON"),
    (lambda p: p.write_text('{"schema": 1, "rows": {}}'), "not a seamgate result (no 'schema' and 'outcomes' keys)"),
    (lambda p: p.write_text('{"schema": 99, "exit_code": 0, "outcomes": []}'), "result schema 99, this seamgate reads schema 1"),
    (lambda p: p.write_text('{"schema": 1, "exit_code": 0, "outcomes": [{"gate": "g"}]}'), "not a readable seamgate result"),
], ids=["folder-without-outcomes", "xml-not-json", "matrix-json", "schema-99", "outcome-without-arm"])
def test_a_path_that_is_not_a_kept_result_is_a_usage_error_naming_it(tmp_path: Path, capsys, make, words):
    path = tmp_path / "thing"
    make(path)
    assert report(str(path)) == ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert str(path) in err and words in err and "Traceback" not in err


def test_mte_of_a_gate_run_without_a_sweep_is_refused_with_the_fix(tmp_path: Path, capsys):
    assert report(str(part(tmp_path / "a", None)), "--format", "mte") == ExitCode.USAGE_ERROR
    assert "holds no sweep" in capsys.readouterr().err


def test_two_results_without_merge_are_refused(tmp_path: Path, capsys):
    assert report(str(part(tmp_path / "a", 1)), str(part(tmp_path / "b", 2))) == ExitCode.USAGE_ERROR
    assert "add --merge" in capsys.readouterr().err


def test_out_writes_the_file_and_an_outcomes_json_path_works_as_well_as_its_folder(tmp_path: Path, capsys):
    out = tmp_path / "deep" / "junit.xml"
    assert report(str(RECORDED / "outcomes.json"), "--format", "junit", "--out", str(out)) == ExitCode.OK
    assert out.read_text().startswith('<?xml version="1.0"') and capsys.readouterr().out == ""


def test_md_is_appended_to_the_github_step_summary_and_still_printed(tmp_path: Path, monkeypatch, capsys):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert report(str(RECORDED), "--format", "md") == ExitCode.OK
    assert report(str(RECORDED), "--format", "md", "--out", str(summary)) == ExitCode.OK  # named as --out: once
    text = summary.read_text()
    assert text.startswith("earlier\n") and text.count("## seamgate:") == 2
    assert capsys.readouterr().out.startswith("## seamgate:")


def test_check_exits_with_the_results_own_code(tmp_path: Path):
    failed = part(tmp_path / "a", None, verdict=Verdict.FAIL, exit_code=int(ExitCode.GATE_FAILED))
    assert report(str(failed)) == ExitCode.OK
    assert report(str(failed), "--check") == ExitCode.GATE_FAILED


# --- merge ------------------------------------------------------------------------------------------

def test_merge_joins_every_shard_in_order_into_one_report(tmp_path: Path, capsys):
    parts = [part(tmp_path / f"s{k}", k) for k in (3, 1, 2)]
    assert report("--merge", *map(str, parts), "--format", "json") == ExitCode.OK
    data = json.loads(capsys.readouterr().out)
    assert [o["gate"] for o in data["outcomes"]] == ["g1", "g2", "g3"] and "shard" not in data


def test_merge_check_exits_with_the_merged_runs_code(tmp_path: Path):
    parts = [part(tmp_path / "s1", 1), part(tmp_path / "s2", 2, verdict=Verdict.FAIL, exit_code=1), part(tmp_path / "s3", 3)]
    assert report("--merge", "--check", *map(str, parts)) == ExitCode.GATE_FAILED


@pytest.mark.parametrize("parts, words", [
    ([(1, 3, PLAN), (2, 3, PLAN)], ["shard 3/3 is missing"]),
    ([(1, 3, PLAN), (2, 3, PLAN), (2, 3, PLAN), (3, 3, PLAN)], ["shard 2/3 is given 2 times", "/p1", "/p2"]),
    ([(1, 3, PLAN), (2, 3, PLAN), (3, 3, PLAN), (2, 2, PLAN)], ["/p3 (shard 2/2) is one of 2 shards, the others of 3"]),
    ([(1, 3, PLAN), (2, 3, PLAN), (3, 3, "b" * 64)], ["/p2 (shard 3/3) was cut from another plan (bbbbbbbbbbbb"]),
    ([(1, 3, PLAN), (2, 3, PLAN), (3, 3, PLAN), (None, 3, PLAN)], ["/p3 is not a shard"]),
    ([(1, 3, PLAN), (2, 3, PLAN), (3, 3, "")], ["/p2 (shard 3/3) has no plan digest"]),
], ids=["missing", "duplicated", "other-n", "other-plan", "not-a-shard", "no-plan"])
def test_a_missing_duplicated_or_mismatched_shard_fails_the_merge_naming_it(tmp_path: Path, capsys, parts, words):
    folders = [part(tmp_path / f"p{i}", k, n, plan=plan) for i, (k, n, plan) in enumerate(parts)]
    out = tmp_path / "merged.md"
    assert report("--merge", *map(str, folders), "--out", str(out)) == ExitCode.MERGE_FAILED
    err = capsys.readouterr().err
    assert err.startswith("seamgate: error: cannot merge: ")
    for word in words:
        assert word in err
    assert not out.exists()  # a failed merge writes nothing


@pytest.mark.slow
def test_two_real_shard_runs_record_their_shard_and_plan_and_merge_into_the_whole_run(tmp_path: Path, capsys):
    from tests.reports.fixture_projects import catalog, gate, mutation, run_quietly, write_project

    project = write_project(tmp_path / "p")
    mutations = catalog(mutation("add-off-by-one", "return a + b", "return a + b + 1"))
    gates = [gate("g-a", mutation="add-off-by-one", red=RedSet(nodeids=("tests/test_add.py::test_add_small",
                                                                         "tests/test_add.py::test_add_zero"))),
             gate("g-b", mutation="add-off-by-one", select=("tests/test_mul.py",), red=RedSet(count=0))]
    for k in (1, 2):
        run_quietly(project, gates, mutations, shard=(k, 2), output=tmp_path / f"shard{k}", json=tmp_path / f"s{k}.json")
    kept = [json.loads((tmp_path / f"shard{k}" / "outcomes.json").read_text()) for k in (1, 2)]
    assert [d["shard"] for d in kept] == [{"k": 1, "n": 2}, {"k": 2, "n": 2}]
    import jsonschema

    schema = json.loads((Path(__file__).parents[2] / "harness" / "results" / "result_schema.json").read_text())
    for data in kept:  # what a real run writes is what the published schema says
        jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)
    assert kept[0]["plan"] == kept[1]["plan"] == plan_digest([("g-a", "cpu-emulated"), ("g-b", "cpu-emulated")])
    assert report("--merge", str(tmp_path / "shard2"), str(tmp_path / "shard1"), "--format", "junit") == ExitCode.OK
    xml = capsys.readouterr().out
    assert 'name="g-a[cpu-emulated]"' in xml and 'name="g-b[cpu-emulated]"' in xml
    assert json.loads((tmp_path / "s1.json").read_text())["plan"] == kept[0]["plan"]  # --json is outcomes.json
    assert report("--merge", str(tmp_path / "s1.json"), str(tmp_path / "s2.json")) == ExitCode.OK
    capsys.readouterr()
    assert report("--merge", str(tmp_path / "shard1")) == ExitCode.MERGE_FAILED
    assert "shard 2/2 is missing" in capsys.readouterr().err


def test_an_out_that_is_a_folder_or_cannot_be_written_is_refused_before_anything_is_read(tmp_path: Path, capsys):
    assert report(str(tmp_path / "absent"), "--out", str(tmp_path)) == ExitCode.USAGE_ERROR
    assert "is a folder; name a file" in capsys.readouterr().err
    assert report(str(RECORDED), "--out", "/proc/seamgate-report.md") == ExitCode.ENVIRONMENT
    assert "/proc is not writable" in capsys.readouterr().err


def test_two_parts_holding_a_sweep_fail_the_merge_instead_of_dropping_one(tmp_path: Path, capsys):
    from reports.mutants import MutantOutcome, SweepResult

    sweep = SweepResult(scope=("calc.py",), mutants=(MutantOutcome("m1", "calc.py", 3, status="killed"),))
    folders = []
    for k in (1, 2):
        folder = tmp_path / f"p{k}"
        write_json(folder / "outcomes.json", Report(), 0, shard=(k, 2), plan=PLAN, sweep=sweep)
        folders.append(str(folder))
    assert report("--merge", *folders) == ExitCode.MERGE_FAILED
    assert "2 parts hold a sweep" in capsys.readouterr().err
    write_json(tmp_path / "p2" / "outcomes.json", Report(), 0, shard=(2, 2), plan=PLAN)
    assert report("--merge", *folders, "--format", "json") == ExitCode.OK
    assert json.loads(capsys.readouterr().out)["sweep"]["mutants"][0]["id"] == "m1"
