"""The strict unified-diff applier: exact context at the stated line, no fuzz, no offset."""

from __future__ import annotations

import difflib

import pytest

from mutations.patch import PatchFormatError, PatchMismatch, apply_patch, parse_patch

OLD = "".join(f"line {i}\n" for i in range(1, 21))
NEW = OLD.replace("line 3\n", "LINE 3\n").replace("line 18\n", "line 18\nadded\n")


def diff(old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/x.py", "b/x.py", n=2))


def test_a_diff_made_by_difflib_applies_back_exactly_with_several_hunks() -> None:
    patch = parse_patch(diff(OLD, NEW))
    assert patch.path == "x.py" and len(patch.hunks) == 2
    assert apply_patch(OLD, patch) == NEW


def test_a_hunk_whose_lines_moved_is_refused_and_the_error_says_where_they_are_now() -> None:
    with pytest.raises(PatchMismatch, match="hunk 1 .* at line 2 instead"):
        apply_patch("new first line\n" + OLD, parse_patch(diff(OLD, NEW)))


def test_a_hunk_whose_context_changed_is_refused() -> None:
    with pytest.raises(PatchMismatch, match="not in the file"):
        apply_patch(OLD.replace("line 2\n", "line two\n"), parse_patch(diff(OLD, NEW)))


def test_a_missing_final_newline_is_kept_as_the_diff_says() -> None:
    old, new = "a\nb\n", "a\nc"
    assert apply_patch(old, parse_patch(diff(old, new) + "\n\\ No newline at end of file\n")) == new


def test_hunk_counts_that_disagree_with_the_body_are_a_format_error() -> None:
    with pytest.raises(PatchFormatError, match="header says 3 old"):
        parse_patch("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n")


def test_text_without_hunks_is_a_format_error() -> None:
    with pytest.raises(PatchFormatError, match="no hunks"):
        parse_patch("this is not a diff\n")
