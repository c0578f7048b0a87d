"""The --prove audit (issue 28): a default run and a --prove run of the same tree must give the same verdicts and cells.

The default run infers cases and reuses rows; ``--prove`` runs every case. ``scripts/prove_audit.py``
compares the two JSON reports and fails on the first disagreement, naming the gate or the case.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AUDIT = ROOT / "scripts" / "prove_audit.py"


def _case(nodeid: str, kind: str, inferred: bool = False) -> dict:
    return {"nodeid": nodeid, "kind": kind, "message": "", "inferred": inferred, "carried": False}


def _report(verdict: str = "PASS", red_kind: str = "failed", inferred: bool = False) -> dict:
    runs = [{"label": "mutation m cpu-emulated", "cases": [_case("t.py::a", "passed", inferred),
                                                          _case("t.py::b", red_kind, inferred)]}]
    return {"schema": 1, "exit_code": 0, "outcomes": [
        {"gate": "g3-x", "arm": "cpu-emulated", "verdict": verdict, "message": "m", "runs": runs},
        {"gate": "g3-x", "arm": "cuda", "verdict": "OWED", "message": "no GPU"}]}


def _audit(tmp_path: Path, default: dict, prove: dict) -> subprocess.CompletedProcess[str]:
    a, b = tmp_path / "default.json", tmp_path / "prove.json"
    a.write_text(json.dumps(default))
    b.write_text(json.dumps(prove))
    return subprocess.run([sys.executable, str(AUDIT), "--default", str(a), "--prove", str(b)],
                          capture_output=True, text=True, cwd=ROOT)


def test_two_reports_with_the_same_verdicts_and_cells_pass_the_audit(tmp_path: Path) -> None:
    done = _audit(tmp_path, _report(inferred=True), _report())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK" in done.stdout and "2 verdicts" in done.stdout and "2 cells" in done.stdout


def test_a_verdict_that_differs_fails_the_audit_naming_the_gate_and_arm(tmp_path: Path) -> None:
    done = _audit(tmp_path, _report(verdict="PASS"), _report(verdict="FAIL"))
    assert done.returncode == 1
    assert "g3-x [cpu-emulated]: default PASS, --prove FAIL" in done.stdout


def test_an_inferred_cell_that_a_full_run_gives_otherwise_fails_the_audit_naming_the_case(tmp_path: Path) -> None:
    done = _audit(tmp_path, _report(red_kind="passed", inferred=True), _report(red_kind="failed"))
    assert done.returncode == 1
    assert "t.py::b" in done.stdout and "default passed (inferred), --prove failed" in done.stdout


def test_a_gate_missing_from_one_report_fails_the_audit(tmp_path: Path) -> None:
    prove = _report()
    prove["outcomes"] = prove["outcomes"][:1]
    done = _audit(tmp_path, _report(), prove)
    assert done.returncode == 1
    assert "g3-x [cuda]: default OWED, --prove (absent)" in done.stdout


def test_an_unreadable_report_is_a_usage_error_naming_the_file_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "prove.json").write_text("{not json")
    (tmp_path / "default.json").write_text(json.dumps(_report()))
    done = subprocess.run([sys.executable, str(AUDIT), "--default", str(tmp_path / "default.json"),
                           "--prove", str(tmp_path / "prove.json")], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert "prove.json" in done.stderr and "Traceback" not in done.stderr


def test_a_cell_in_one_report_only_fails_the_audit_naming_the_case(tmp_path: Path) -> None:
    # A default run that reported fewer cases than the full run ran (or more) hides what it did not run.
    default = _report()
    default["outcomes"][0]["runs"][0]["cases"] = default["outcomes"][0]["runs"][0]["cases"][:1]
    done = _audit(tmp_path, default, _report())
    assert done.returncode == 1, done.stdout
    assert "mutation m cpu-emulated :: t.py::b: default (absent), --prove failed" in done.stdout
    done = _audit(tmp_path, _report(), default)
    assert done.returncode == 1 and "t.py::b: default failed, --prove (absent)" in done.stdout
