"""Sweep generation: mutmut 3 makes and names the mutants; ours carry mutmut's names and its mutated text."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytest.importorskip("mutmut", reason="mutmut 3 is in the test extra (pip install -e '.[test]')")

from harness.sweep.mutants import added_lines, generate, trampolined  # noqa: E402

#: A file with what mutmut treats specially: a class's methods, a staticmethod, a decorated
#: function (never mutated), a multi-line string inside a method, a nested function, module-level code.
SOURCE = '''"""Module doc."""
import functools

LIMIT = 3


def add(a, b=1):
    return a + b


class Box:
    """A box."""

    def __init__(self, size):
        self.size = size * 2

    @staticmethod
    def label(name):
        text = """line one
  line two"""
        return name.upper() + text

    def grow(self, by):
        def inner(x):
            return x - 1
        return inner(self.size + by)


@functools.cache
def cached(x):
    return x + 100


def last(items):
    return items[-1] if items else None
'''


def _write(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text(SOURCE)
    return tmp_path


def test_generated_mutants_carry_mutmuts_own_names_in_mutmuts_order(tmp_path: Path) -> None:
    from mutmut.mutation.file_mutation import mutate_file_contents

    root = _write(tmp_path)
    mutants = generate(root, "pkg/mod.py")
    # mutmut's own generation of the trampolined file (what `mutmut run` writes into mutants/)
    theirs = [f"pkg.mod.{name}" for name in mutate_file_contents("pkg/mod.py", SOURCE).mutant_names]
    assert [m.id for m in mutants] == theirs
    assert trampolined(root, "pkg/mod.py")[1] == theirs
    assert any(m.id.startswith("pkg.mod.xǁBoxǁlabel__mutmut_") for m in mutants)
    assert not any("cached" in m.id for m in mutants)  # decorated functions are not mutated by mutmut


def test_each_mutant_is_the_whole_file_with_exactly_mutmuts_change(tmp_path: Path) -> None:
    import libcst as cst
    from mutmut.mutation.file_mutation import create_mutations, deep_replace

    root = _write(tmp_path)
    mutants = generate(root, "pkg/mod.py")
    module, mutations, _, _ = create_mutations("pkg/mod.py", SOURCE)
    expected = {deep_replace(module, m.original_node, m.mutated_node).code for m in mutations}
    for mutant in mutants:
        ast.parse(mutant.text)
        assert mutant.text != SOURCE
        assert mutant.text in expected, mutant.id  # mutmut's own whole-module rendering of that mutation
    assert isinstance(module, cst.Module)


def test_a_mutant_knows_its_line_its_operator_and_its_diff(tmp_path: Path) -> None:
    root = _write(tmp_path)
    add = [m for m in generate(root, "pkg/mod.py") if m.id.startswith("pkg.mod.x_add__mutmut_")]
    swapped = [m for m in add if "return a - b" in m.text]
    assert len(swapped) == 1
    mutant = swapped[0]
    assert (mutant.file, mutant.line, mutant.mutator) == ("pkg/mod.py", 8, "swap_op")
    assert "-    return a + b\n+    return a - b\n" in mutant.diff
    assert added_lines(mutant.diff) == "return a - b"
    assert mutant.function == "x_add"


def test_a_method_mutant_keeps_the_class_indentation_and_the_string_as_written(tmp_path: Path) -> None:
    root = _write(tmp_path)
    upper = [m for m in generate(root, "pkg/mod.py") if "name.lower() + text" in m.text]
    assert len(upper) == 1
    assert "        return name.lower() + text\n" in upper[0].text
    assert '        text = """line one\n  line two"""\n' in upper[0].text
