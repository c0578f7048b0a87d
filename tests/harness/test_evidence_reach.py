"""Evidence hashes the files a gate's cases reached, read without comments, docstrings or blank lines.

A stand-in GPU machine (the cuda arm made runnable on this CPU) measures a gate and writes its JSON
report; that report becomes the evidence of a second run on the same tree, where cuda is OWED again.
What each edit between the two runs does to the recorded verdict is the fact under test (issue 27).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.exit_codes import ExitCode
from harness.gates.model import RedSet
from harness.results.evidence import load_records
from harness.results.platforms import Platform
from reports.outcome import Verdict
from tests.reports.fixture_projects import catalog, gate, mutation, run_quietly, write_project

#: ``drivers/ops.py`` is what the gate's cases run; ``drivers/dense.py`` is imported by it (its module
#: level runs at import) but no case runs a line of its function; ``seam/unused.py`` is never imported.
PROJECT = {
    "drivers/__init__.py": "",
    "drivers/ops.py": ('"""Arithmetic the tests run."""\n\nfrom drivers.dense import step\n\n\n'
                       'def add(a, b):\n    """Their sum."""\n    return a + b\n'),
    "drivers/dense.py": 'SCALE = 2\n\n\ndef step(x):\n    return x * SCALE\n',
    "seam/__init__.py": "",
    "seam/unused.py": "def nothing():\n    return None\n",
    "tests/__init__.py": "",
    "tests/test_add.py": "from drivers.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
MUT = mutation("add-off-by-one", "return a + b", "return a + b + 1", target="drivers/ops.py")
GATE = gate("g", mutation="add-off-by-one", select=("tests/test_add.py",), red=RedSet(files=("tests/test_add.py",)),
            arms=("cuda",))


def _measure_on_a_stand_in_gpu(project: Path, monkeypatch: pytest.MonkeyPatch, report: Path) -> dict:
    """The cuda arm run here as a GPU machine would run it; its JSON report moved into ``evidence/``."""
    with monkeypatch.context() as m:
        m.setattr(Platform, "unavailable", lambda self, arm: None)
        measured, code, _ = run_quietly(project, [GATE], catalog(MUT), json=report)
    assert code is ExitCode.OK and measured.outcomes[0].verdict is Verdict.PASS, measured.outcomes[0].message
    data = json.loads(report.read_text())
    (project / "evidence").mkdir(exist_ok=True)
    (project / "evidence" / "gpu.json").write_text(json.dumps(data))
    return data


def _judged_from_evidence(project: Path, monkeypatch: pytest.MonkeyPatch) -> Verdict:
    """The second run, on a machine where cuda cannot run (so the record judges it), even on a GPU machine."""
    with monkeypatch.context() as m:
        m.setattr(Platform, "unavailable", lambda self, arm: "OWED: cuda arm: no GPU on the machine that reads the evidence")
        report, _, _ = run_quietly(project, [GATE], catalog(MUT), evidence=load_records(project, ["evidence"]))
    (outcome,) = report.outcomes
    return outcome.verdict


def _edit(project: Path, rel: str, old: str, new: str) -> None:
    path = project / rel
    text = path.read_text()
    if old not in text:
        raise ValueError(f"{rel}: {old!r} not in the fixture (the test would edit nothing)")
    path.write_text(text.replace(old, new, 1))


#: (file, old text, new text): edits that change nothing the GPU ran.
KEEPS = {
    "a comment line in a reached file": ("drivers/ops.py", "def add(a, b):\n", "# why: the seam adds\ndef add(a, b):\n"),
    "a trailing comment in a reached file": ("drivers/ops.py", "return a + b\n", "return a + b  # the sum\n"),
    "a changed docstring and blank lines": ("drivers/ops.py", '"""Their sum."""\n', '"""The sum of a and b.\n\n    Ints.\n    """\n\n'),
    "a function body of an imported file no case runs": ("drivers/dense.py", "return x * SCALE", "return x * SCALE + 1"),
    "a file under seam/ the gate never imports": ("seam/unused.py", "return None", "return 1"),
}
#: Edits that change what the GPU ran (or may have): the evidence is STALE.
STALES = {
    "a changed statement in a reached file": ("drivers/ops.py", "return a + b\n", "return b + a\n"),
    "a changed string literal in a reached file": ("drivers/ops.py", "return a + b\n", "print('x')\n    return a + b\n"),
    "a module-level statement of an imported file": ("drivers/dense.py", "SCALE = 2", "SCALE = 3"),
    "a changed import in a reached file": ("drivers/ops.py", "from drivers.dense import step\n",
                                           "from drivers.dense import step, SCALE\n"),
}


@pytest.mark.parametrize("edit", sorted(KEEPS))
def test_an_edit_that_changes_nothing_the_cases_ran_keeps_the_evidence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       edit: str) -> None:
    project = write_project(tmp_path / "p", PROJECT)
    _measure_on_a_stand_in_gpu(project, monkeypatch, tmp_path / "r.json")
    assert _judged_from_evidence(project, monkeypatch) is Verdict.PASS  # the precondition: the record stands as measured
    _edit(project, *KEEPS[edit])
    assert _judged_from_evidence(project, monkeypatch) is Verdict.PASS


@pytest.mark.parametrize("edit", sorted(STALES))
def test_an_edit_that_changes_what_the_cases_ran_makes_the_evidence_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                          edit: str) -> None:
    project = write_project(tmp_path / "p", PROJECT)
    _measure_on_a_stand_in_gpu(project, monkeypatch, tmp_path / "r.json")
    assert _judged_from_evidence(project, monkeypatch) is Verdict.PASS
    _edit(project, *STALES[edit])
    assert _judged_from_evidence(project, monkeypatch) is Verdict.STALE


def test_a_reached_file_deleted_makes_the_evidence_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = dict(PROJECT, **{"drivers/ops.py": "from drivers.helper import twice\n\n\ndef add(a, b):\n    return a + b\n",
                             "drivers/helper.py": "def twice(x):\n    return 2 * x\n",
                             "tests/test_add.py": ("from drivers.ops import add\n\n\ndef test_add():\n"
                                                   "    from drivers.helper import twice\n    assert add(1, 2) == 3\n"
                                                   "    assert twice(2) == 4\n")})
    project = write_project(tmp_path / "p", files)
    data = _measure_on_a_stand_in_gpu(project, monkeypatch, tmp_path / "r.json")
    assert "drivers/helper.py" in data["outcomes"][0]["provenance"]["hashed_files"]  # the precondition: it was reached
    assert _judged_from_evidence(project, monkeypatch) is Verdict.PASS
    (project / "drivers" / "helper.py").unlink()
    assert _judged_from_evidence(project, monkeypatch) is Verdict.STALE
