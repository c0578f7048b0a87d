"""docs/tutorial.md cannot rot: every `sh tutorial` block runs, in order, on a copy of examples/toyengine."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tutorial.steps import Step, load, missing_lines, steps

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"


def test_the_tutorial_covers_init_reds_red_first_arm_owed_and_every_report() -> None:
    scripts = "\n".join(step.script for step in load(TUTORIAL))
    for needed in ("seamgate init", "seamgate run\n", "seamgate mutations reds ", "kind: red-first",
                   "source: {ref: ", "[{arm}]", "--fail-on-owed", "--json ", "--markdown ",
                   ".seamgate/runs/latest", "examples/toyengine"):
        assert needed in scripts, f"docs/tutorial.md runs no command with {needed!r}"


def test_a_shown_line_that_was_not_printed_is_reported_and_order_matters() -> None:
    printed = "alpha\nbeta gamma\ndelta\n"
    assert missing_lines(("alpha", "...", "delta"), printed) == []
    assert missing_lines(("beta...delta",), printed) == ["beta...delta"]  # `...` stays within one line
    assert missing_lines(("b...gam",), printed) == []
    assert missing_lines(("delta", "alpha"), printed) == ["alpha"]
    assert missing_lines(("epsilon",), printed) == ["epsilon"]


def test_an_output_block_belongs_to_the_command_block_before_it() -> None:
    text = ("```sh tutorial\necho a\n```\n\n```text output exit=3\na\n```\n"
            "```sh tutorial\necho b\n```\n```toml\nx = 1\n```\n")
    assert steps(text) == [Step(1, "echo a\n", 3, ("a",)), Step(8, "echo b\n", 0, ())]
    with pytest.raises(ValueError, match="no `sh tutorial` block before it"):
        steps("```text output\nx\n```\n")


def environment(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SEAM_", "GIT_", "PYTHON"))}
    return {**keep, "HOME": str(home), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "SEAMGATE_CHECKOUT": str(ROOT), "COLUMNS": "200", "GIT_AUTHOR_NAME": "tutorial",
            "GIT_AUTHOR_EMAIL": "tutorial@example.com", "GIT_COMMITTER_NAME": "tutorial",
            "GIT_COMMITTER_EMAIL": "tutorial@example.com", "GIT_CONFIG_NOSYSTEM": "1",
            # The tutorial shows a machine without a GPU (the cuda arm OWED); on the H200 the arm runs
            # and reads PASS, as the tutorial says in words, so the GPU is hidden here.
            "CUDA_VISIBLE_DEVICES": ""}


def run_step(step: Step, cwd: Path, env: dict[str, str], where: Path) -> tuple[int, str, Path]:
    """Run one block with bash in ``cwd``; returns its exit code, output, and the folder it ended in."""
    script = f'trap \'pwd > "{where}"\' EXIT\ncd "{cwd}"\n{step.script}'
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], env=env, capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout + done.stderr, Path(where.read_text().strip())


@pytest.mark.slow
def test_every_command_of_the_tutorial_prints_what_the_tutorial_shows(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
    env, cwd, where = environment(home), home, tmp_path / "cwd"
    timings = []
    for step in load(TUTORIAL):
        started = time.monotonic()
        code, printed, cwd = run_step(step, cwd, env, where)
        first = step.script.splitlines()[0]
        timings.append(f"docs/tutorial.md:{step.line} {time.monotonic() - started:5.1f} s  {first}")
        assert code == step.exit_code, (f"docs/tutorial.md:{step.line} ({first}) exited {code}, the tutorial "
                                        f"shows {step.exit_code}:\n{printed}\n" + "\n".join(timings))
        missing = missing_lines(step.shown, printed)
        assert not missing, (f"docs/tutorial.md:{step.line} ({first}) did not print {missing[0]!r}:\n{printed}\n"
                             + "\n".join(timings))
    print("\n".join(timings))
