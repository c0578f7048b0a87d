"""Patch fuzz, as GNU patch has it: when a hunk's exact context is nowhere, up to 2 context lines at
its outer edges are dropped (fuzz 1, then 2), the fuzz is reported, and a hunk is never applied where
its shortened lines match twice."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from mutations.patch import PatchMismatch, parse_patch, place_patch

OLD = "".join(f"line {i}\n" for i in range(1, 21))
NEW = OLD.replace("line 10\n", "TEN\n")


def diff(old: str, new: str, context: int = 3) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/x.py", "b/x.py", n=context))


PATCH = parse_patch(diff(OLD, NEW))  # @@ -7,7 +7,7 @@: lines 7-9 and 11-13 are its context


def edited(text: str, *numbers: int) -> str:
    """``text`` with each ``line N`` named rewritten (an edit the diff was not written against)."""
    for n in numbers:
        text = text.replace(f"line {n}\n", f"line {n} edited\n")
    return text


def test_a_hunk_whose_outermost_context_line_changed_applies_with_fuzz_1_and_says_so() -> None:
    result = place_patch(edited(OLD, 7), PATCH)
    assert result.text == edited(NEW, 7)
    assert [p.describe() for p in result.offsets] == ["hunk 1 (@@ -7) applied with fuzz 1"]


def test_two_changed_context_lines_at_the_edges_apply_with_fuzz_2_and_an_offset_is_said_too() -> None:
    result = place_patch("added above\n" + edited(OLD, 7, 8, 13), PATCH)
    assert result.text == "added above\n" + edited(NEW, 7, 8, 13)
    assert [p.describe() for p in result.offsets] == ["hunk 1 (@@ -7) applied at offset +1 line with fuzz 2"]


def test_a_third_changed_context_line_is_beyond_fuzz_2_and_refused_naming_the_hunk() -> None:
    with pytest.raises(PatchMismatch, match=r"hunk 1 \(@@ -7\) does not apply: its context and removed lines are no "
                                            r"longer in the file; .*tried with up to 2 context lines dropped"):
        place_patch(edited(OLD, 7, 8, 9), PATCH)


def test_removed_lines_are_never_fuzzed_away() -> None:
    # One context line above the deleted line, three below: fuzz never drops more than a side has,
    # so the deleted line must still be there (dropping two lines from the top would leave only
    # `line 11` to match, and a mutation that deletes nothing).
    deletion = parse_patch("--- a/x.py\n+++ b/x.py\n@@ -9,5 +9,4 @@\n line 9\n-line 10\n line 11\n line 12\n line 13\n")
    result = place_patch(edited(OLD, 13), deletion)  # the bottom edge drifted: fuzz 1 drops it
    assert result.text == edited(OLD, 13).replace("line 10\n", "") and result.placements[0].fuzz == 1
    with pytest.raises(PatchMismatch, match=r"hunk 1 \(@@ -9\) does not apply"):
        place_patch(edited(OLD, 10), deletion)


def test_a_fuzzed_hunk_whose_shortened_lines_match_in_two_places_is_refused_naming_both() -> None:
    block = "def f():\n    setup()\n    key = 1\n    teardown()\n"
    old = "first = 0\n" + block + "\n\n" + block + "last = 0\n"
    patch = parse_patch(diff(old, old.replace("    key = 1\n", "    key = 2\n", 1), context=2))
    drifted = old.replace("def f():\n", "def g():\n", 1)  # the hunk's first context line changed
    with pytest.raises(PatchMismatch, match=r"hunk 1 \(@@ -2\) does not apply: with fuzz 1 its lines match in 2 "
                                            r"places \(lines 3, 9\), so where it belongs is ambiguous"):
        place_patch(drifted, patch)


def test_an_exact_match_is_taken_before_any_fuzz() -> None:
    result = place_patch(OLD, PATCH)
    assert result.text == NEW and result.offsets == ()


def test_the_check_command_prints_the_fuzz_under_the_ok_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli.main import main

    (tmp_path / "pyproject.toml").write_text("[tool.seamgate]\n")
    (tmp_path / "mutations/catalog").mkdir(parents=True)
    (tmp_path / "mutations/catalog/p.yaml").write_text(
        "version: 1\nmutations:\n  - {id: p, title: t, target: x.py, patch: p.diff}\n")
    source = "".join(f"line_{i} = {i}\n" for i in range(1, 21))
    (tmp_path / "mutations/catalog/p.diff").write_text(diff(source, source.replace("line_10 = 10\n", "line_10 = 0\n")))
    (tmp_path / "x.py").write_text(source.replace("line_7 = 7\n", "line_7 = 70\n"))  # edited since the diff
    assert main(["--project", str(tmp_path), "mutations", "check"]) == 0
    out = capsys.readouterr().out
    assert "ok    p  x.py  +1 -1\n      p: hunk 1 (@@ -7) applied with fuzz 1\n" in out
