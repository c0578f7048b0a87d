"""``own_process`` modules (``tests/torch_cuda/conftest.py``): each case of the arms named takes the outcome it had in
the module's own fresh interpreter: a pass passes, a failure fails with its own message, a skip skips with its
reason. A case reported passed without having passed would be a false green of the allocator's tests on the H200,
where the mechanism runs (the cuda arm), and an OWED case must stay OWED. Here a planted module runs on the emulated
arm (``SEAMGATE_OWN_PROCESS_ARMS``), in a scratch project holding a copy of this folder's conftest, so nothing is
written into this tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reports.junit_in import SideFile, read_cases

ROOT = Path(__file__).resolve().parents[2]

PLANTED = '''
import os

import pytest

pytestmark = pytest.mark.own_process


def test_passes_where_it_runs_alone(torch_cuda):
    assert os.environ.get("SEAMGATE_OWN_PROCESS") == "1"


def test_fails(torch_cuda):
    assert 1 == 2, "planted failure"


def test_skips(torch_cuda):
    pytest.skip("planted skip")


def test_is_owed(torch_cuda):
    pytest.skip("OWED: planted arm that could not run")
'''


@pytest.mark.slow
def test_each_case_takes_the_outcome_it_had_in_its_own_process(tmp_path: Path) -> None:
    folder = tmp_path / "tests" / "torch_cuda"
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "torch_cuda" / "conftest.py", folder / "conftest.py")
    (folder / "test_planted.py").write_text(PLANTED, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    report = tmp_path / "outer.xml"
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "SEAMGATE_OWN_PROCESS_ARMS": "cpu-emulated", "SEAM_ARMS": "cpu-emulated",
           "SEAM_EMULATE_CUDA": "0", "PYTHONPATH": path}
    env.pop("SEAMGATE_OWN_PROCESS", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                           "tests/torch_cuda/test_planted.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    cases = read_cases(report, SideFile.read(tmp_path / "no-side-file.json")) or ()
    outcomes = {case.nodeid.split("::")[-1]: (case.kind, case.message) for case in cases}
    assert set(outcomes) == {"test_passes_where_it_runs_alone[cpu-emulated]", "test_fails[cpu-emulated]",
                             "test_skips[cpu-emulated]", "test_is_owed[cpu-emulated]"}, done.stdout[-2000:]
    assert outcomes["test_passes_where_it_runs_alone[cpu-emulated]"][0] == "passed"
    kind, message = outcomes["test_fails[cpu-emulated]"]
    assert kind == "failed" and "in its own process" in message and "planted failure" in message
    kind, message = outcomes["test_skips[cpu-emulated]"]
    assert kind == "skipped" and "planted skip" in message
    kind, message = outcomes["test_is_owed[cpu-emulated]"]
    assert kind == "owed" and message.startswith("OWED: planted arm")  # still OWED: the reason stays first
