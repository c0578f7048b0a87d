"""``seamgate mutations reds`` reuses the kept baseline when nothing it read changed, and takes ``--timeout``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.cli.reds import run_reds
from harness.exit_codes import ExitCode
from tests.harness.test_cli_plan import ADD, FILES, MUTATIONS, cli
from tests.reports.fixture_projects import shared_server, write_project


class Counting:
    """The shared fork server, recording the output folder of every run submitted to it."""

    def __init__(self) -> None:
        self.server, self.runs = shared_server(), []

    def submit(self, request: dict[str, Any]) -> Any:
        self.runs.append(str(request.get("stdout", request.get("cwd", ""))))
        return self.server.submit(request)

    def kill_all(self) -> None:
        self.server.kill_all()


def baselines(runs: list[str]) -> list[str]:
    return [r for r in runs if "baseline" in r]


def test_reds_reuses_the_kept_baseline_when_nothing_it_read_changed(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", FILES)
    first = Counting()
    code, red, _ = run_reds(root, MUTATIONS, "add-zero-is-one", ("tests",), launcher=first)
    assert code == ExitCode.OK and [c.nodeid for c in red] == [f"{ADD}::test_add_zero"]
    assert baselines(first.runs), f"the premise: the first call runs the baseline ({first.runs})"
    again = Counting()
    code, red, _ = run_reds(root, MUTATIONS, "add-zero-is-one", ("tests",), launcher=again)
    assert code == ExitCode.OK and [c.nodeid for c in red] == [f"{ADD}::test_add_zero"]
    assert baselines(again.runs) == []
    (root / ADD).write_text((root / ADD).read_text() + "\n\ndef test_more():\n    assert True\n")
    changed = Counting()
    code, red, _ = run_reds(root, MUTATIONS, "add-zero-is-one", ("tests",), launcher=changed)
    assert code == ExitCode.OK and baselines(changed.runs), "a changed test file runs the baseline again"


def test_reds_takes_a_timeout_for_the_mutations_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = {**FILES, "tests/test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(3)\n"}
    root = write_project(tmp_path / "p", files)
    code, text = cli(capsys, "--project", str(root), "mutations", "reds", "add-zero-is-one", "--select", "tests",
                     "--timeout", "1")
    # the limit of every run of the call, as a gate's `timeout` is: the 3 s baseline runs past it, and says so
    assert code != ExitCode.OK and "could not be judged" in text, text
    assert "timeout" in text and "(1 s)" in text, text
