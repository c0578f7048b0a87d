"""The unified-diff applier: exact context at the stated line or at a reported offset, as `git apply`
(fuzz, when the exact lines are nowhere: tests/mutations/test_patch_fuzz.py)."""

from __future__ import annotations

import difflib

import pytest

from mutations.patch import HunkPlacement, PatchFormatError, PatchMismatch, apply_patch, parse_patch, place_patch

OLD = "".join(f"line {i}\n" for i in range(1, 21))
NEW = OLD.replace("line 3\n", "LINE 3\n").replace("line 18\n", "line 18\nadded\n")


def diff(old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/x.py", "b/x.py", n=2))


def test_a_diff_made_by_difflib_applies_back_exactly_with_several_hunks() -> None:
    patch = parse_patch(diff(OLD, NEW))
    assert patch.path == "x.py" and len(patch.hunks) == 2
    assert apply_patch(OLD, patch) == NEW


def test_a_patch_still_applies_after_an_unrelated_line_is_added_above_it_and_says_its_offset() -> None:
    result = place_patch("new first line\n" + OLD, parse_patch(diff(OLD, NEW)))
    assert result.text == "new first line\n" + NEW
    assert [p.describe() for p in result.offsets] == ["hunk 1 (@@ -1) applied at offset +1 line"]
    assert result.placements[1] == HunkPlacement(2, 17, 0), "the next hunk is expected where the first one landed"


def test_a_hunk_applies_at_the_nearest_place_its_lines_appear() -> None:
    old = "x\nkey\ny\n" * 3
    patch = parse_patch("--- a/x.py\n+++ b/x.py\n@@ -4,3 +4,3 @@\n x\n-key\n+KEY\n y\n")
    moved = "top\n" + old  # the stated line 4 is now line 5; lines 1-3 and 7-9 hold the same text
    assert place_patch(moved, patch).text == "top\n" + "x\nkey\ny\nx\nKEY\ny\nx\nkey\ny\n"


def test_a_hunk_whose_context_is_gone_is_refused_naming_the_hunk_and_the_fix() -> None:
    with pytest.raises(PatchMismatch, match=r"hunk 1 \(@@ -1\) does not apply: its context and removed lines are no "
                                            r"longer in the file; regenerate the diff against today's file .*replace-def"):
        apply_patch(OLD.replace("line 3\n", "line three\n"), parse_patch(diff(OLD, NEW)))  # a removed line changed


def test_a_hunk_is_never_applied_above_the_hunk_before_it() -> None:
    swapped = parse_patch("--- a/x.py\n+++ b/x.py\n@@ -10 +10 @@\n-line 10\n+TEN\n@@ -12 +12 @@\n-line 2\n+TWO\n")
    with pytest.raises(PatchMismatch, match=r"hunk 2 \(@@ -12\) does not apply: its lines are only above the previous hunk"):
        apply_patch(OLD, swapped)


def test_a_missing_final_newline_is_kept_as_the_diff_says() -> None:
    old, new = "a\nb\n", "a\nc"
    assert apply_patch(old, parse_patch(diff(old, new) + "\n\\ No newline at end of file\n")) == new


def test_hunk_counts_that_disagree_with_the_body_are_a_format_error() -> None:
    with pytest.raises(PatchFormatError, match="header says 3 old"):
        parse_patch("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n")


def test_text_without_hunks_is_a_format_error() -> None:
    with pytest.raises(PatchFormatError, match="no hunks"):
        parse_patch("this is not a diff\n")


def test_a_crlf_file_keeps_its_line_endings_and_takes_an_lf_diff() -> None:
    crlf = OLD.replace("\n", "\r\n")
    assert apply_patch(crlf, parse_patch(diff(OLD, NEW))) == NEW.replace("\n", "\r\n")
