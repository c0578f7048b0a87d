"""Reach by line (``harness/reach/reach.py``), case by case, without starting a run: which regions an edit
touches, which cases a region reaches, and every way a reach becomes unknown (every case runs).

A defect here does not crash: a case wrongly left out is INFERRED from the baseline, a false PASS in
waiting. These unit cases are the selection of the reach sweep (issue 28); the end-to-end cases that
start runs are in ``test_matrix.py`` and ``test_name_reach.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.reach.reach import Attribute, Reach, _changed_lines, cases_reached, cases_to_run, change_regions
from tests.harness.posix_locale import run_in_posix_locale

MODULE = '''import os


def add(a, b):
    return a + b


def outer():
    x = 1

    def inner():
        return x + 1

    return inner()


@decorate
def wrapped():
    return 2


LIMIT = 3


class Plain:
    size = 4
    label: str = "p"
    __slots__ = ()
    made = compute()

    def method(self):
        return self.size

    # a comment in the body


class Kinds(Enum):
    A = 1
'''


def _lines(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def _edit(needle: str, replacement: str) -> list:
    return change_regions(MODULE, MODULE.replace(needle, replacement, 1))


def test_a_changed_line_in_a_body_is_that_body_the_innermost_one() -> None:
    assert _edit("return a + b", "return a - b") == [(5, 5)]
    assert _edit("return x + 1", "return x + 2") == [(12, 12)]  # inner's body, not outer's
    assert _edit("    x = 1", "    x = 2") == [(9, 14)]  # outer's body holds it, inner's does not


def test_an_import_a_def_line_or_a_decorator_reaches_the_whole_file() -> None:
    assert _edit("import os", "import sys") == [None]
    assert _edit("def add(a, b):", "def add(a, b=0):") == [None]
    assert _edit("@decorate", "@other") == [None]


def test_module_level_code_or_a_class_header_is_unknown() -> None:
    assert _edit("LIMIT = 3", "LIMIT = 4") is None
    assert _edit("class Plain:", "class Plain(Base):") is None


def test_a_plain_class_attribute_is_read_by_name_and_the_new_value_counts_too() -> None:
    assert _edit("    size = 4", "    size = 5") == [Attribute("size")]
    assert _edit('    label: str = "p"', '    label: str = "q"') == [Attribute("label")]
    renamed = _edit("    size = 4", "    width = 4")
    assert renamed == [Attribute("size"), Attribute("width")]


@pytest.mark.parametrize(("needle", "replacement"), [
    ("    __slots__ = ()", "    __slots__ = ('a',)"),  # a dunder: the interpreter reads it
    ("    made = compute()", "    made = compute(1)"),  # computed by a call at import
    ("    A = 1", "    A = 2"),  # an Enum's member
])
def test_class_level_names_read_generically_or_computed_at_import_are_unknown(needle: str, replacement: str) -> None:
    assert _edit(needle, replacement) is None


@pytest.mark.parametrize("header", ["@dataclass\nclass Plain:", "class Plain(metaclass=Meta):",
                                    "class Plain(enum.Enum):", "class Plain(Base[int]):"])
def test_an_attribute_of_a_decorated_or_generic_or_unreadable_class_is_unknown(header: str) -> None:
    original = MODULE.replace("class Plain:", header, 1)
    assert change_regions(original, original.replace("    size = 4", "    size = 5", 1)) is None


def test_an_annotation_without_a_value_is_unknown() -> None:
    original = MODULE.replace('    label: str = "p"', "    label: str", 1)
    assert change_regions(original, original.replace("    label: str", "    label: int", 1)) is None


def test_a_comment_or_blank_line_in_a_class_body_reaches_the_whole_file() -> None:
    assert _edit("    # a comment in the body", "    # another comment") == [None]


def test_an_insertion_names_both_neighbours_and_what_it_wrote_must_be_in_a_body_too() -> None:
    inserted = MODULE.replace("    return a + b\n", "    a = abs(a)\n    return a + b\n", 1)
    assert change_regions(MODULE, inserted) == [None, (5, 5)]  # the def line above, the body below
    at_module = MODULE.replace("LIMIT = 3\n", "LIMIT = 3\nEXTRA = 1\n", 1)
    assert change_regions(MODULE, at_module) is None


def test_an_edit_that_does_not_parse_is_unknown_on_either_side() -> None:
    assert change_regions(MODULE, MODULE.replace("return a + b", "return a +", 1)) is None
    assert change_regions("def f(:\n", "def f():\n    pass\n") is None


def test_the_changed_lines_of_each_side() -> None:
    assert _changed_lines("a\nb\nc\n", "a\nB\nc\n") == ([2], [2])
    assert _changed_lines("a\nb\nc\n", "a\nc\n") == ([2], [])
    assert _changed_lines("a\nb\n", "a\nx\nb\n") == ([1, 2], [2])
    assert _changed_lines("a\n", "x\na\n") == ([1], [1])  # before the first line: one neighbour
    assert _changed_lines("a\n", "a\nx\n") == ([1], [2])  # after the last line: one neighbour
    assert _changed_lines("a\nb\nc\nd\n", "a\nB\nc\nD\n") == ([2, 4], [2, 4])


REACH = {
    "files": {"calc/ops.py": {"t.py::a": [5], "t.py::b": [12], "fixture:db": [20], "": [1]},
              "calc/other.py": {"t.py::c": [3]}},
    "fixtures": {"t.py::d": ["db"], "t.py::e": ["tmp"]},
    "spawned": ["t.py::s"],
    "cases": ["t.py::a", "t.py::b", "t.py::c", "t.py::d", "t.py::e", "t.py::s"],
    "spawn_regions": [["calc/other.py", 3, 4, "t.py::s"]],
    "children": {"t.py::k": {"calc/ops.py": [30]}},
    "spawn_counts": {"t.py::s": [1, 0, 0], "t.py::q": [0, 2, 0], "t.py::z": [0, 0, 3]},
}


def test_a_recorded_reach_reads_back_every_field(tmp_path: Path) -> None:
    path = tmp_path / "reach.json"
    path.write_text(json.dumps(REACH))
    reach = Reach.read(path)
    assert reach == Reach.from_data(REACH)
    assert reach.files["calc/ops.py"]["t.py::a"] == frozenset({5}) and reach.fixtures["t.py::d"] == ("db",)
    assert reach.spawned == frozenset({"t.py::s"}) and "t.py::e" in reach.cases
    assert reach.spawn_regions == (("calc/other.py", 3, 4, "t.py::s"),)
    assert reach.children == {"t.py::k": {"calc/ops.py": frozenset({30})}}
    assert reach.starters == frozenset({"t.py::s", "t.py::q"})  # a third count (not a child start) does not count
    assert Reach.from_data({k: v for k, v in REACH.items() if k != "spawn_counts"}).starters is None


def test_a_reach_that_cannot_be_read_is_none(tmp_path: Path) -> None:
    assert Reach.read(tmp_path / "missing.json") is None
    (tmp_path / "bad.json").write_text("{not json")
    assert Reach.read(tmp_path / "bad.json") is None


def test_which_cases_a_region_reaches_with_fixtures_children_and_the_unknown() -> None:
    reach = Reach.from_data(REACH)
    assert reach.unknown() == frozenset({"t.py::s", "t.py::c"})  # s spawned; c ran a function on s's stack
    assert reach.reaching("calc/ops.py", [(5, 5)]) == {"t.py::a", "t.py::s", "t.py::c"}
    assert reach.reaching("calc/ops.py", [(20, 20)]) == {"t.py::d", "t.py::s", "t.py::c"}  # d uses fixture db
    assert reach.reaching("calc/ops.py", [(30, 30)]) == {"t.py::k", "t.py::s", "t.py::c"}  # k's child ran it
    assert reach.reaching("calc/ops.py", [(40, 40)]) == {"t.py::s", "t.py::c"}
    assert reach.reaching("calc/ops.py", [(1, 1)]) is None  # ran at import: every case
    # the whole file: every context that ran a line of it (import time's "" is no case), and the unknown
    assert reach.reaching("calc/ops.py", [None]) == {"t.py::a", "t.py::b", "t.py::d", "t.py::k", "t.py::s", "t.py::c"}
    assert reach.reaching("calc/none.py", [None]) == {"t.py::s", "t.py::c"}
    assert reach.child_starters() == frozenset({"t.py::s", "t.py::q"})
    assert Reach.from_data({k: v for k, v in REACH.items() if k != "spawn_counts"}).child_starters() is None


def test_a_fixture_context_that_starts_a_child_makes_its_users_unknown() -> None:
    reach = Reach.from_data({**REACH, "spawned": ["fixture:db"], "spawn_regions": []})
    assert reach.unknown() == frozenset({"t.py::d"})


def test_cases_to_run_without_a_change_or_a_reach_is_every_case() -> None:
    reach = Reach.from_data(REACH)
    assert cases_to_run(None, reach, ["t.py::a"]) is None
    assert cases_to_run({"calc/ops.py": ("a", "b")}, None, ["t.py::a"]) is None


def test_cases_to_run_keeps_the_reached_and_the_never_measured_among_the_asked() -> None:
    reach = Reach.from_data(REACH)
    original = "\n".join(["x = 0"] * 3 + ["def f():", "    return 1"]) + "\n"
    mutated = original.replace("return 1", "return 2")
    assert change_regions(original, mutated) == [(5, 5)]
    asked = ["t.py::a", "t.py::b", "t.py::new", "t.py::s"]
    assert cases_to_run({"calc/ops.py": (original, mutated)}, reach, asked) == {"t.py::a", "t.py::new", "t.py::s"}


def test_cases_reached_is_unknown_when_any_file_is() -> None:
    reach = Reach.from_data(REACH)
    assert cases_reached({"calc/ops.py": [(5, 5)], "calc/other.py": None}, reach, ["t.py::a"]) is None
    assert cases_reached({"calc/ops.py": [(1, 1)]}, reach, ["t.py::a"]) is None
    assert cases_reached({"calc/ops.py": [(12, 12)], "calc/other.py": [(3, 3)]}, reach,
                         ["t.py::a", "t.py::b", "t.py::c"]) == {"t.py::b", "t.py::c"}


def test_an_attribute_is_unknown_without_the_measured_tree_and_read_by_name_with_it(tmp_path: Path) -> None:
    reach = Reach.from_data({**REACH, "files": {"calc/ops.py": {"t.py::a": [3], "t.py::b": [6]}}})
    assert cases_reached({"calc/ops.py": [Attribute("size")]}, reach, ["t.py::a", "t.py::b"]) is None
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "ops.py").write_text(
        "class Plain:\n    size = 4\n\n    def grow(self):\n        return self.size + 1\n\n"
        "    def other(self):\n        return 0\n")
    found = cases_reached({"calc/ops.py": [Attribute("size")]}, reach, ["t.py::a", "t.py::b", "t.py::s"],
                          project=tmp_path)
    assert found == {"t.py::s"}  # nobody ran line 5 (grow), where size is read; s is unknown
    reach = Reach.from_data({**REACH, "files": {"calc/ops.py": {"t.py::a": [5], "t.py::b": [8]}}})
    assert cases_reached({"calc/ops.py": [Attribute("size"), (8, 8)]}, reach, ["t.py::a", "t.py::b"],
                         project=tmp_path) == {"t.py::a", "t.py::b"}


def test_a_recorded_reach_without_optional_fields_reads_as_empty() -> None:
    assert Reach.from_data({}) == Reach(files={}, fixtures={}, spawned=frozenset(), cases=frozenset(),
                                        spawn_regions=(), children={}, starters=None)


def test_a_recorded_reach_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    """A node id with non-ASCII text (a parametrized case) read under the POSIX locale with coercion off."""
    (tmp_path / "reach.json").write_text(json.dumps({"cases": ["t.py::test_x[café]"]}, ensure_ascii=False),
                                         encoding="utf-8")
    code = ("import sys; from pathlib import Path; from harness.reach.reach import Reach\n"
            "print(ascii(sorted(Reach.read(Path(sys.argv[1])).cases)))")
    assert run_in_posix_locale(code, str(tmp_path / "reach.json")) == ascii(["t.py::test_x[café]"])


def test_a_region_met_inside_not_only_at_its_ends_and_the_last_line_of_a_spawners_function_counts() -> None:
    reach = Reach.from_data({**REACH, "files": {**REACH["files"], "calc/other.py": {"t.py::c": [3], "t.py::f": [4]}}})
    assert reach.reaching("calc/ops.py", [(10, 13)]) == {"t.py::b", "t.py::s", "t.py::c", "t.py::f"}
    assert "t.py::f" in reach.unknown()  # it ran line 4, the last of the function on s's stack


def test_cases_to_run_looks_an_attribute_up_in_the_measured_tree(tmp_path: Path) -> None:
    (tmp_path / "calc").mkdir()
    original = "class Plain:\n    size = 4\n\n    def grow(self):\n        return self.size + 1\n"
    (tmp_path / "calc" / "ops.py").write_text(original)
    reach = Reach.from_data({"files": {"calc/ops.py": {"t.py::a": [5]}}, "cases": ["t.py::a", "t.py::b"]})
    changes = {"calc/ops.py": (original, original.replace("size = 4", "size = 5"))}
    assert cases_to_run(changes, reach, ["t.py::a", "t.py::b"]) is None  # no tree: unknown
    assert cases_to_run(changes, reach, ["t.py::a", "t.py::b"], project=tmp_path) == {"t.py::a"}


def test_a_deleted_module_statement_or_one_inserted_between_imports_is_unknown() -> None:
    assert change_regions(MODULE, MODULE.replace("LIMIT = 3\n", "", 1)) is None
    assert change_regions(MODULE, MODULE.replace("import os\n", "import os\nEXTRA = 1\n", 1)) is None


@pytest.mark.parametrize("base", ["Base", "mod.Base"])
def test_an_attribute_of_a_class_with_a_plain_base_is_read_by_name(base: str) -> None:
    original = MODULE.replace("class Plain:", f"class Plain({base}):", 1)
    assert change_regions(original, original.replace("    size = 4", "    size = 5", 1)) == [Attribute("size")]


def test_a_long_file_of_repeated_lines_is_diffed_line_for_line_and_two_insertions_name_four_neighbours() -> None:
    # difflib's autojunk treats a line repeated in over 1% of 200+ lines as junk: a line written into a run of
    # them would read as the whole run replaced (50 lines, not 3 and 1)
    head = [f"p{n}" for n in range(150)]
    a, b = head + ["x = 1"] * 100, head + ["x = 1"] * 50 + ["q"] + ["x = 1"] * 49
    assert _changed_lines("\n".join(a), "\n".join(b)) == ([200, 201, 250], [201])
    assert _changed_lines("a\nb\nc\n", "a\nX\nb\nY\nc\n") == ([1, 2, 2, 3], [2, 4])


NESTED = '''import os

if os.name:
    class Inner:
        size = 4

        depth = 1

LIMIT = (
    3
)


@register
class Tagged:
    kind = "t"


class Wide(
    Base,
):
    width = 2
'''


def _nested(needle: str, replacement: str) -> list | None:
    return change_regions(NESTED, NESTED.replace(needle, replacement, 1))


def test_the_innermost_statement_outside_bodies_decides_a_line() -> None:
    assert _nested("        size = 4", "        size = 5") == [Attribute("size")]  # the class in an `if`, not the `if`
    assert _nested("    3\n", "    4\n") is None  # the second line of a module-level statement
    assert _nested("@register", "@other") is None  # a class decorator: the class header
    assert _nested("    Base,", "    Other,") is None  # the second line of a class header
    assert _nested("\n        depth = 1", "\n        # c\n        depth = 1") is None  # in the class in the `if`


def test_a_comment_between_two_class_statements_is_no_header() -> None:
    original = MODULE.replace("    size = 4\n", "    size = 4\n    # about the label\n", 1)
    assert change_regions(original, original.replace("# about the label", "# on the label", 1)) == [None]


def test_a_recorded_reach_reads_back_the_files_each_context_opened_and_where() -> None:
    data = {**REACH, "opened": {"t.py::a": ["docs/x.md", "data/"], "": ["top.txt"]},
            "open_regions": [["calc/ops.py", "3", "4", "t.py::a"]]}
    reach = Reach.from_data(data)
    assert reach.opened == {"t.py::a": frozenset({"docs/x.md", "data/"}), "": frozenset({"top.txt"})}
    assert reach.open_regions == (("calc/ops.py", 3, 4, "t.py::a"),)  # numbers as numbers, whatever the JSON held
    assert Reach.from_data(REACH).opened is None and Reach.from_data(REACH).open_regions == ()  # recorded before reads were
