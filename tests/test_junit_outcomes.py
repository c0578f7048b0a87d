"""``scripts/junit_outcomes.py``: a reduced report keeps each case's outcome and its message's first line and nothing
else, and the comparison fails on an outcome that differs or a case that is missing."""

from __future__ import annotations

import json
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


def test_file_times_sum_each_test_files_cases_over_every_report(tmp_path: Path) -> None:
    """``filetimes``: seconds per test file (what ``scripts/device_shards.sh`` balances its shards by, ``TIMES``),
    summed over the cases of every report given (one a shard); a class's cases count for its file."""
    (tmp_path / "tests" / "pkg").mkdir(parents=True)
    for name in ("test_one.py", "test_two.py"):
        (tmp_path / "tests" / "pkg" / name).write_text("")
    (tmp_path / "s0.xml").write_text("""<testsuites><testsuite name="pytest">
<testcase classname="tests.pkg.test_one" name="test_a" time="1.5" />
<testcase classname="tests.pkg.test_one.TestK" name="test_b" time="2.0" />
<testcase classname="elsewhere.test_gone" name="test_c" time="9" />
</testsuite></testsuites>""")
    (tmp_path / "s1.xml").write_text("""<testsuites><testsuite name="pytest">
<testcase classname="tests.pkg.test_two" name="test_d" time="0.25" />
<testcase classname="tests.pkg.test_one" name="test_e" time="0.5" />
</testsuite></testsuites>""")
    out = tmp_path / "times.json"
    done = subprocess.run([sys.executable, str(SCRIPT), "filetimes", "--out", str(out), "s0.xml", "s1.xml"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text()) == {"tests/pkg/test_one.py": 4.0, "tests/pkg/test_two.py": 0.25}
    assert "2 files" in done.stdout and "1 case of no file here" in done.stdout


def test_a_comparison_of_one_class_matches_its_cases_by_class_and_name_whatever_their_module(tmp_path: Path) -> None:
    """``compare --class K``: only the cases of class ``K``, matched by class and case name, so a class harvested into
    a module of another name (PyTorch's ``TestBlockStateAbsorption`` in ``.probe/pytorch``) compares with the GPU's
    report of the whole file; the other classes are not counted."""
    (tmp_path / "gpu.xml").write_text(_GPU.replace('classname="m.T" name="test_c"', 'classname="m.U" name="test_c"'))
    (tmp_path / "emulated.xml").write_text("""<testsuites><testsuite name="pytest">
<testcase classname=".probe.pytorch.harvested.T" name="test_a" time="0.1" />
<testcase classname=".probe.pytorch.harvested.T" name="test_b" time="0.1" />
</testsuite></testsuites>""")
    done = _run("compare", "--class", "T", str(tmp_path / "gpu.xml"), str(tmp_path / "emulated.xml"))
    assert done.returncode == 1
    assert "DIFFERS T.test_b: failed" in done.stdout and "1 of 2 outcomes" in done.stdout and "test_c" not in done.stdout
