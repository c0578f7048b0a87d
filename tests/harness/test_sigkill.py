"""SIGKILL in the middle of a mutation run leaves the user's tree byte-identical and no child alive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.results.lock import RepositoryLock
from harness.run.signals import sweep_stale_workdirs
from tests.reliability.faults import _alive, _wait_for  # one reading of /proc: a process gone mid-read is dead
from tests.reports.fixture_projects import CALC, tree_digest, write_project

REPO = Path(__file__).resolve().parents[2]

SLOW_TEST = (
    "import os, time\nfrom calc import ops\n\n\n"
    "def test_slow_under_the_mutation():\n"
    "    if getattr(ops, 'MUTATED', False):\n"
    "        with open(os.environ['MARKER'], 'w') as fh:\n"
    "            fh.write(str(os.getpid()))\n"
    "        time.sleep(120)\n"
)

DRIVER = """
import io, sys
from pathlib import Path
from harness.gates.model import RedSet
from harness.run.runner import RunOptions, catalog_materializer, run_gates
from tests.reports.fixture_projects import catalog, gate, mutation

project = Path(sys.argv[1])
mutations = catalog(mutation("mark", "def mul(a, b):", "MUTATED = True\\n\\n\\ndef mul(a, b):"))
g = gate("g", mutation="mark", red=RedSet(count=1), env={"MARKER": sys.argv[2]}, timeout=300)
report, code = run_gates([g], project=project, options=RunOptions(progress=False),
                         materializer=catalog_materializer(mutations))
sys.exit(int(code))
"""


@pytest.mark.slow
def test_sigkill_of_the_runners_process_group_mid_mutation_leaves_the_tree_byte_identical(tmp_path):
    project = write_project(tmp_path / "proj", {**CALC, "tests/test_slow.py": SLOW_TEST})
    marker = tmp_path / "marker"
    before = tree_digest(project)
    runner = subprocess.Popen([sys.executable, "-c", DRIVER, str(project), str(marker)], cwd=REPO,
                              start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert _wait_for(marker.exists, 90), runner.stderr.read1().decode() if runner.poll() is not None else "no marker"
        assert _wait_for(lambda: marker.read_text().strip() != "", 5)
        child = int(marker.read_text())
        assert runner.poll() is None, "the runner must still be mid-run when it is killed"
        os.killpg(runner.pid, signal.SIGKILL)
        runner.wait(10)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    assert _wait_for(lambda: not _alive(child), 15), "the mutated run outlived the runner"
    assert tree_digest(project) == before
    with RepositoryLock(project):  # the kernel released the dead runner's lock
        pass
    leftovers = [p for p in sweep_stale_workdirs() if p.name.startswith(f"seamgate-run-{runner.pid}-")]
    assert leftovers, "the killed runner's temp folder is swept by the next run"


@pytest.mark.slow
def test_sigterm_mid_run_kills_the_children_cleans_up_and_exits_interrupted(tmp_path):
    import tempfile

    project = write_project(tmp_path / "proj", {**CALC, "tests/test_slow.py": SLOW_TEST})
    marker = tmp_path / "marker"
    before = tree_digest(project)
    runner = subprocess.Popen([sys.executable, "-c", DRIVER, str(project), str(marker)], cwd=REPO,
                              start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert _wait_for(lambda: marker.exists() and marker.read_text().strip() != "", 90)
        child = int(marker.read_text())
        runner.send_signal(signal.SIGTERM)
        out, _ = runner.communicate(timeout=30)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    assert runner.returncode == 130 and b"interrupted" in out
    assert _wait_for(lambda: not _alive(child), 15)
    assert tree_digest(project) == before
    assert not list(Path(tempfile.gettempdir()).glob(f"seamgate-run-{runner.pid}-*"))
