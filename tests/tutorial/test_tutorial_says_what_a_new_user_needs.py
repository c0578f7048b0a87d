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
    assert "already have a copy" in " ".join(prose.split()), (
        "docs/tutorial.md's clone command has a placeholder URL: say what to do with a copy of seamgate you already have")


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


def test_the_tutorial_shows_seamgate_and_the_users_own_pytest_agree_on_a_project_without_pythonpath():
    """Issue 27, item 1: on a project laid out as a new user lays one out (a package folder at the root,
    `tests/` without `__init__.py`, no `pythonpath`), the user's `pytest` cannot import the package and
    `seamgate run` says the same (not PASS); after the fix both are green. test_tutorial.py runs these steps."""
    shown = [(step.script.strip(), step.exit_code, "\n".join(step.shown)) for step in load(TUTORIAL)]
    def first(after: int, script: str, code: int, says: str) -> int:
        for index in range(after + 1, len(shown)):
            if shown[index][0].endswith(script) and shown[index][1] == code and says in shown[index][2]:
                return index
        raise AssertionError(f"docs/tutorial.md shows no `{script}` exiting {code} with {says!r} after step "
                             f"{after + 1}: show the user's own pytest and seamgate agreeing on a project without "
                             "`pythonpath` (issue 27, item 1)")
    laid_out = next((i for i, (script, _, _) in enumerate(shown) if "mkdir " in script and "__init__.py" in script
                     and "cat > tests/" in script), None)
    assert laid_out is not None, "docs/tutorial.md lays out no package folder with tests/ of its own"
    assert "tests/__init__.py" not in shown[laid_out][0]
    assert "pythonpath" not in "\n".join(script for script, _, _ in shown[:laid_out + 1])
    red = first(laid_out, "pytest -q", 2, "No module named")
    error = first(red, "seamgate run", 3, "your own pytest cannot collect")
    assert error == red + 1, "show `seamgate run` right after the user's own `pytest` fails, on the same tree"
    fixed = first(error, "pytest -q", 0, "1 passed")
    assert 'pythonpath = ["."]' in shown[fixed][0] + shown[fixed][2]
    agreed = first(fixed, "seamgate run", 0, "-> exit OK")
    assert agreed == fixed + 1, "show `seamgate run` right after the fix makes the user's own `pytest` green"
