"""Checking mutations against today's code: diff stat, rot, and mutated code that does not compile."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutations.check import check_mutation, diff_stat, mutated_diff
from mutations.model import Location, Mutation

SCOPE = "def close(scope):\n    scope.join()\n    scope.end()\n"


def mutation(op: str, anchor: str = "", text: str = "", patch: str | None = None) -> Mutation:
    return Mutation(id="m", title="t", target="seam/scope.py", op=op, location=Location("c.yaml", 2, 5),  # type: ignore[arg-type]
                    anchor=anchor, text=text, patch=patch)


def project(tmp_path: Path) -> Path:
    (tmp_path / "seam").mkdir()
    (tmp_path / "seam/scope.py").write_text(SCOPE)
    return tmp_path


def test_a_mutation_that_applies_and_compiles_is_ok_with_its_diff_stat(tmp_path: Path) -> None:
    result = check_mutation(project(tmp_path), mutation("replace", "    scope.join()\n", "    pass\n    pass\n"))
    assert result.ok and result.diffstat == "+2 -1"


def test_a_mutation_whose_anchor_vanished_is_rot(tmp_path: Path) -> None:
    result = check_mutation(project(tmp_path), mutation("delete", "scope.fork()\n"))
    assert result.status == "rot" and "anchor not found in seam/scope.py" in (result.problem or "")


def test_a_patch_that_no_longer_applies_is_rot_naming_the_hunk(tmp_path: Path) -> None:
    patch = "--- a/seam/scope.py\n+++ b/seam/scope.py\n@@ -2 +2 @@\n-    scope.fork()\n+    pass\n"
    result = check_mutation(project(tmp_path), mutation("patch", patch=patch))
    assert result.status == "rot" and "patch (inline) on seam/scope.py: hunk 1" in (result.problem or "")


def test_a_vanished_target_is_rot(tmp_path: Path) -> None:
    result = check_mutation(tmp_path, mutation("delete", "x"))
    assert result.status == "rot" and "does not exist" in (result.problem or "")


def test_mutated_code_that_does_not_compile_is_reported_with_its_line(tmp_path: Path) -> None:
    result = check_mutation(project(tmp_path), mutation("delete", "    scope.join()\n    scope.end()\n"))
    assert result.status == "no-compile"
    assert "the mutated seam/scope.py:1 does not compile" in (result.problem or "")


def test_mutated_diff_is_a_unified_diff_of_the_target(tmp_path: Path) -> None:
    text = mutated_diff(project(tmp_path), mutation("delete", "    scope.join()\n"))
    assert text.startswith("--- a/seam/scope.py\n+++ b/seam/scope.py\n@@")
    assert "\n-    scope.join()\n" in text


def test_diff_stat_counts_changed_lines_like_git() -> None:
    assert diff_stat("a\nb\nc\n", "a\nB\nc\nd\n") == (2, 1)


def test_a_mutation_that_redefines_a_name_is_refused_naming_it(tmp_path: Path) -> None:
    twice = "\n\ndef close(scope):\n    scope.end()\n"
    result = check_mutation(project(tmp_path), mutation("insert-after", "    scope.end()\n", twice))
    assert result.status == "lint" and "redefinition of unused 'close'" in (result.problem or "")
    assert "c.yaml:2:5" in (result.problem or "")


def test_a_mutation_that_leaves_a_name_undefined_is_refused(tmp_path: Path) -> None:
    result = check_mutation(project(tmp_path), mutation("replace", "scope.end()", "scoop.end()"))
    assert result.status == "lint" and "undefined name 'scoop'" in (result.problem or "")


def test_a_redefinition_already_in_the_file_is_not_blamed_on_the_mutation(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "seam/scope.py").write_text(SCOPE + "\n\ndef close(scope):\n    scope.end()\n")
    assert check_mutation(root, mutation("replace", "    scope.join()\n", "    pass\n")).ok


def test_a_patch_that_applies_at_an_offset_is_ok_and_its_record_says_the_offset(tmp_path: Path) -> None:
    patch = "--- a/seam/scope.py\n+++ b/seam/scope.py\n@@ -1,2 +1,2 @@\n def close(scope):\n-    scope.join()\n+    pass\n"
    root = project(tmp_path)
    assert check_mutation(root, mutation("patch", patch=patch)).notes == ()
    (root / "seam/scope.py").write_text('"""A docstring added above the patched lines."""\n\n' + SCOPE)
    result = check_mutation(root, mutation("patch", patch=patch))
    assert result.ok and result.notes == ("hunk 1 (@@ -1) applied at offset +2 lines",)


def test_the_check_command_prints_each_offset_under_its_ok_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli.main import main

    root = project(tmp_path)
    (root / "pyproject.toml").write_text("[tool.seamgate]\n")
    (root / "mutations/catalog").mkdir(parents=True)
    (root / "mutations/catalog/p.yaml").write_text(
        "version: 1\nmutations:\n  - {id: p, title: t, target: seam/scope.py, patch: p.diff}\n")
    (root / "mutations/catalog/p.diff").write_text(
        "--- a/seam/scope.py\n+++ b/seam/scope.py\n@@ -3 +3 @@\n-    scope.end()\n+    pass\n")
    (root / "seam/scope.py").write_text("import os\n" + SCOPE)
    assert main(["--project", str(root), "mutations", "check"]) == 0
    out = capsys.readouterr().out
    assert "ok    p  seam/scope.py  +1 -1\n      p: hunk 1 (@@ -3) applied at offset +1 line\n" in out
