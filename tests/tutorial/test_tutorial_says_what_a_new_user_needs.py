"""docs/tutorial.md says what a new user trips on (issue 27, item 8): how to get the clone its commands copy
from, where every gate it counts comes from, and why its gates list the `cuda` arm."""

from __future__ import annotations

import re
from pathlib import Path

from tests.tutorial.steps import load

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
#: A gate's line in a run's output: `decode-values [cuda] OWED` / `decode-values cuda OWED` (the JSON listing).
SHOWN = re.compile(r"^([a-z0-9][a-z0-9._-]*) \[?(?:cpu-emulated|cuda)\]? (?:PASS|OWED|FAIL|ERROR|STALE)\b", re.M)


def _prose() -> str:
    """The tutorial without its fenced blocks: what a reader is told in words."""
    return re.sub(r"```.*?```", "", TUTORIAL.read_text(encoding="utf-8"), flags=re.S)


def test_the_tutorial_says_how_to_get_the_seamgate_clone_it_copies_from():
    prose = _prose()
    assert "git clone" in prose and "SEAMGATE_CHECKOUT=" in prose, (
        "docs/tutorial.md copies from $SEAMGATE_CHECKOUT: say how to clone seamgate and set it")


def test_every_gate_the_tutorial_counts_is_one_it_writes_or_one_it_names_as_coming_with_the_copy():
    written = {m for step in load(TUTORIAL) for m in re.findall(r"- id: ([a-z0-9._-]+)", step.script)}
    shown = set(SHOWN.findall(TUTORIAL.read_text(encoding="utf-8")))
    prose = _prose()
    unexplained = sorted(g for g in shown - written if f"`{g}`" not in prose)
    assert not unexplained, (f"docs/tutorial.md shows gates it never writes and never names in its text: "
                             f"{unexplained}; say which gate file of the copy holds them")


def test_the_tutorial_says_cuda_belongs_in_arms_only_for_tests_that_run_on_the_gpu():
    prose = " ".join(_prose().split())
    assert "plain Python test" in prose and "[cpu-emulated]" in prose, (
        "docs/tutorial.md lists `cuda` in its gates' arms: say it is for tests on the `backend` fixture, and that "
        "a plain Python test's cuda arm stays OWED on every machine without a GPU (arms: [cpu-emulated] there)")
