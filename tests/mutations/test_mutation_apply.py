"""Applying mutations to text: exact anchors, explicit occurrences, and rot reported, never guessed."""

from __future__ import annotations

import pytest

from mutations.apply import apply_to_text
from mutations.errors import MutationRotError
from mutations.model import Location, Mutation

SOURCE = (
    "class Scope:\n"
    "    def close(self):\n"
    "        self._join_outstanding_forks()\n"
    "        self._end()\n"
    "    def split(self):\n"
    "        self._join_outstanding_forks()\n"
    "        self._break()\n"
)


def mutation(op: str, anchor: str, text: str = "", occurrence: int | None = None) -> Mutation:
    return Mutation(id="m", title="t", target="seam/scope.py", op=op, location=Location("cat.yaml", 3, 5),  # type: ignore[arg-type]
                    anchor=anchor, text=text, occurrence=occurrence)


def test_delete_removes_the_anchor_at_the_explicit_occurrence_only() -> None:
    mutated = apply_to_text(SOURCE, mutation("delete", "        self._join_outstanding_forks()\n", occurrence=2))
    assert mutated.count("_join_outstanding_forks") == 1
    assert mutated.index("_join_outstanding_forks") < mutated.index("def split")


def test_replace_insert_before_and_insert_after_change_exactly_the_anchor() -> None:
    assert "self._begin()" in apply_to_text(SOURCE, mutation("replace", "self._end()", "self._begin()"))
    before = apply_to_text(SOURCE, mutation("insert-before", "        self._end()\n", "        pass\n"))
    assert "        pass\n        self._end()\n" in before
    after = apply_to_text(SOURCE, mutation("insert-after", "        self._end()\n", "        pass\n"))
    assert "        self._end()\n        pass\n" in after


def test_an_anchor_that_vanished_is_rot_naming_the_target_and_the_fix() -> None:
    with pytest.raises(MutationRotError, match=r"no longer applies: anchor not found in seam/scope.py .*update the catalog entry at cat.yaml:3:5"):
        apply_to_text(SOURCE, mutation("delete", "self._gone()\n"))


def test_an_anchor_that_matches_twice_without_occurrence_is_rot_asking_for_occurrence() -> None:
    with pytest.raises(MutationRotError, match=r"matches 2 times .*lines 3, 6.*add `occurrence:`"):
        apply_to_text(SOURCE, mutation("delete", "        self._join_outstanding_forks()\n"))


def test_an_occurrence_beyond_the_matches_is_rot() -> None:
    with pytest.raises(MutationRotError, match=r"`occurrence: 3` asked for, but the anchor matches 2 time"):
        apply_to_text(SOURCE, mutation("delete", "        self._join_outstanding_forks()\n", occurrence=3))
