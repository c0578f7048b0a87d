"""``scripts/junit_outcomes.py``: a reduced report keeps each case's outcome and its message's first line and nothing
else, and the comparison fails on an outcome that differs or a case that is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "junit_outcomes.py"

_GPU = """<testsuites><testsuite name="pytest">
<testcase classname="m.T" name="test_a" time="0.1"><system-out>printed source</system-out></testcase>
<testcase classname="m.T" name="test_b" time="0.1"><failure message="AssertionError: no&#10;second line">trace</failure></testcase>
<testcase classname="m.T" name="test_c" time="0.1"><skipped type="pytest.xfail" message="" /></testcase>
</testsuite></testsuites>"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT)


def test_a_reduced_report_keeps_outcomes_and_first_lines_only(tmp_path: Path) -> None:
    (tmp_path / "in.xml").write_text(_GPU)
    assert _run("reduce", str(tmp_path / "in.xml"), str(tmp_path / "out.xml")).returncode == 0
    text = (tmp_path / "out.xml").read_text()
    assert "printed source" not in text and "trace" not in text and "second line" not in text
    assert 'message="AssertionError: no"' in text
    same = _run("compare", str(tmp_path / "in.xml"), str(tmp_path / "out.xml"))
    assert same.returncode == 0 and "3 of 3 outcomes" in same.stdout


def test_a_differing_outcome_and_a_missing_case_fail_the_comparison(tmp_path: Path) -> None:
    (tmp_path / "gpu.xml").write_text(_GPU)
    emulated = _GPU.replace('<skipped type="pytest.xfail" message="" />', "").replace(
        '<testcase classname="m.T" name="test_a" time="0.1"><system-out>printed source</system-out></testcase>', "")
    (tmp_path / "emulated.xml").write_text(emulated)
    done = _run("compare", str(tmp_path / "gpu.xml"), str(tmp_path / "emulated.xml"))
    assert done.returncode == 1
    assert "DIFFERS m.T.test_c: xfailed" in done.stdout and "MISSING m.T.test_a" in done.stdout
    assert "1 of 3 outcomes" in done.stdout
