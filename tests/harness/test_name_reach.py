"""A changed class attribute reaches the cases that executed a statement naming it, and only those."""

from __future__ import annotations

from pathlib import Path

from harness.gates.model import RedSet
from harness.reach.name_reach import name_spans
from harness.reach.reach import Attribute, Reach, cases_to_run, change_regions
from reports.outcome import Verdict
from tests.harness.test_matrix import cases_of
from tests.reports.fixture_projects import CALC, catalog, gate, mutation, run_quietly, write_project

CLASSES = (
    "from dataclasses import dataclass\n"   # 1
    "from enum import Enum\n"               # 2
    "\n"                                    # 3
    "class Box:\n"                          # 4
    "    size = 2\n"                        # 5
    "    kind: str = 'plain'\n"             # 6
    "    made = make()\n"                   # 7
    "    __slots__ = ()\n"                  # 8
    "\n"                                    # 9
    "@dataclass\n"                          # 10
    "class Cfg:\n"                          # 11
    "    width: int = 4\n"                  # 12
    "\n"                                    # 13
    "class Color(Enum):\n"                  # 14
    "    RED = 1\n"                         # 15
    "\n"                                    # 16
    "class Meta(Base, metaclass=M):\n"      # 17
    "    depth = 1\n"                       # 18
    "\n"                                    # 19
    "LIMIT = 3\n"                           # 20
)


def test_a_plain_class_attribute_is_an_attribute_region_on_both_sides_of_the_edit():
    assert change_regions(CLASSES, CLASSES.replace("size = 2", "size = 3")) == [Attribute("size")]
    assert change_regions(CLASSES, CLASSES.replace("kind: str = 'plain'", "kind: str = 'odd'")) == [Attribute("kind")]
    # a rename: whatever read either name can see it
    assert change_regions(CLASSES, CLASSES.replace("size = 2", "area = 2")) == [Attribute("size"), Attribute("area")]


def test_an_attribute_the_language_reads_generically_or_computed_at_import_has_unknown_reach():
    for old, new in (("made = make()", "made = make(1)"),   # a call runs at import
                     ("__slots__ = ()", "__slots__ = ('a',)"),  # the interpreter reads dunders
                     ("width: int = 4", "width: int = 5"),  # a dataclass field's default
                     ("RED = 1", "RED = 2"),                # an enum member
                     ("depth = 1", "depth = 2"),            # a metaclass may read it at class creation
                     ("LIMIT = 3", "LIMIT = 4")):           # module level: read at import anywhere
        assert change_regions(CLASSES, CLASSES.replace(old, new)) is None, old


PROJECT = {
    "pkg/__init__.py": "",
    "pkg/box.py": "class Box:\n    size = 2\n\n\ndef volume(box):\n    n = 1\n    return box.size * n\n",
    "pkg/other.py": "class Other:\n    size = 7\n\n\ndef label(o):\n    return getattr(o, 'size')\n",
    "tests/test_box.py": ("from pkg.box import Box, volume\n\n\n"
                          "def test_volume():\n    assert volume(Box()) == 2\n\n\n"
                          "def test_made():\n    assert Box() is not None\n"),
}


def test_the_statements_naming_an_attribute_are_found_in_function_bodies_of_every_file(tmp_path: Path):
    root = write_project(tmp_path / "p", PROJECT)
    # another class's own `size = 7` is a store at class level: it reads nothing
    assert name_spans(str(root), "size") == {"pkg/box.py": [(7, 7)], "pkg/other.py": [(6, 6)]}
    assert name_spans(str(root), "absent") == {}


def test_a_read_of_the_name_at_import_time_makes_its_reach_unknown(tmp_path: Path):
    root = write_project(tmp_path / "p", {**PROJECT, "pkg/table.py": "from pkg.box import Box\n\nAREA = Box.size * 2\n"})
    assert name_spans(str(root), "size") is None
    keyed = write_project(tmp_path / "k", {**PROJECT, "pkg/made.py": "def make(cls):\n    return cls(size=3)\n"})
    assert name_spans(str(keyed), "size")["pkg/made.py"] == [(2, 2)]  # a keyword names it too


def test_a_changed_attribute_runs_the_cases_that_ran_a_statement_naming_it(tmp_path: Path):
    root = write_project(tmp_path / "p", PROJECT)
    reach = Reach(files={"pkg/box.py": {"t::volume": frozenset({6, 7}), "t::made": frozenset(), "": frozenset({1, 2, 5})},
                         "tests/test_box.py": {"t::volume": frozenset({5}), "t::made": frozenset({9})}},
                  fixtures={}, spawned=frozenset({"t::child"}), cases=frozenset({"t::volume", "t::made", "t::child"}))
    box = PROJECT["pkg/box.py"]
    changes = {"pkg/box.py": (box, box.replace("size = 2", "size = 3"))}
    ids = ("t::volume", "t::made", "t::child", "t::new")
    # the case that read box.size; a case whose child was not measured; a case the measured run never saw
    assert cases_to_run(changes, reach, ids, project=root) == {"t::volume", "t::child", "t::new"}
    assert cases_to_run(changes, reach, ids) is None  # no tree to look the readers up in
    at_import = Reach(files={"pkg/box.py": {"": frozenset({7})}}, fixtures={}, spawned=frozenset(),
                      cases=frozenset({"t::volume"}))
    assert cases_to_run(changes, at_import, ids, project=root) is None  # a reading statement ran at import


ATTRIBUTE = {
    **CALC,
    "calc/ops.py": CALC["calc/ops.py"] + "\n\nclass Scale:\n    factor = 2\n\n\ndef scaled(a):\n    return a * Scale.factor\n",
    "tests/test_scaled.py": "from calc.ops import scaled\n\n\ndef test_scaled():\n    assert scaled(3) == 6\n",
}


def test_a_class_attribute_mutation_runs_only_its_readers_and_judges_as_prove_does(tmp_path: Path):
    project = write_project(tmp_path / "p", ATTRIBUTE)
    mutations = catalog(mutation("factor-three", "factor = 2", "factor = 3"))
    expected = RedSet(nodeids=("tests/test_scaled.py::test_scaled",))
    report, _, _ = run_quietly(project, [gate("g", mutation="factor-three", red=expected)], mutations)
    assert report.outcomes[0].verdict is Verdict.PASS, report.outcomes[0].message
    assert cases_of(report.outcomes[0]) == {
        "tests/test_add.py::test_add_small": ("passed", True), "tests/test_add.py::test_add_zero": ("passed", True),
        "tests/test_mul.py::test_mul": ("passed", True), "tests/test_scaled.py::test_scaled": ("failed", False)}
    proved, _, _ = run_quietly(project, [gate("g", mutation="factor-three", red=expected)], mutations, prove=True)
    assert proved.outcomes[0].verdict is Verdict.PASS
    assert {n: k for n, (k, _) in cases_of(proved.outcomes[0]).items()} == \
        {n: k for n, (k, _) in cases_of(report.outcomes[0]).items()}


def test_a_file_edited_since_an_earlier_lookup_is_read_again(tmp_path: Path):
    # one process may look the same tree up twice (a dry run, then a run): an edit must not be missed
    root = write_project(tmp_path / "p", PROJECT)
    assert name_spans(str(root), "size")["pkg/box.py"] == [(7, 7)]
    (root / "pkg/box.py").write_text(PROJECT["pkg/box.py"] + "\n\ndef double(box):\n    return 2 * box.size\n")
    assert name_spans(str(root), "size")["pkg/box.py"] == [(7, 7), (11, 11)]


SPANS = (
    "class Box:\n"                    # 1
    "    size = 2\n"                  # 2
    "\n"                              # 3
    "\n"                              # 4
    "def volume(box, n):\n"           # 5
    "    total = box.size + (\n"      # 6: named on the first line of two
    "        n)\n"                    # 7
    "    extra = (n +\n"              # 8
    "             box.size)\n"        # 9: named on the last line of two
    "    if n:\n"                     # 10
    "        total += box.size\n"     # 11: the innermost statement, not the `if` around it
    "    return total + extra\n"      # 12
    "\n"                              # 13
    "\n"                              # 14
    "def outer(deco):\n"              # 15
    "    x = 1\n"                     # 16
    "    @deco(x.size)\n"             # 17: a decorator's line is in no statement's span (the def's starts at 18)
    "    def inner():\n"              # 18
    "        return x\n"              # 19
    "    return inner\n"              # 20
)


def test_a_name_is_reached_through_the_innermost_whole_statement_that_names_it(tmp_path: Path):
    root = write_project(tmp_path / "p", {"pkg/spans.py": SPANS})
    assert name_spans(str(root), "size") == {"pkg/spans.py": [(6, 7), (8, 9), (11, 11), (16, 20)]}


def test_a_string_or_a_keyword_naming_the_attribute_at_import_time_makes_its_reach_unknown(tmp_path: Path):
    for line in ("AREA = getattr(Box, 'size')\n", "DEFAULT = Box(size=3)\n"):
        root = write_project(tmp_path / str(len(line)), {**PROJECT, "pkg/table.py": "from pkg.box import Box\n\n" + line})
        assert name_spans(str(root), "size") is None, line


def test_a_file_that_is_not_python_or_is_gone_before_it_is_read_does_not_end_the_search(tmp_path: Path, monkeypatch):
    # "a.json" and "a_gone.py" sort before every file that names the attribute
    root = write_project(tmp_path / "p", {**PROJECT, "a.json": "{}\n"})
    expected = {"pkg/box.py": [(7, 7)], "pkg/other.py": [(6, 6)]}
    assert name_spans(str(root), "size") == expected
    from harness.reach import name_reach

    listed = name_reach.project_files(root)
    monkeypatch.setattr(name_reach, "project_files", lambda _root: ["a_gone.py", *listed])
    assert name_spans(str(root), "size") == expected


def test_an_edit_that_keeps_the_files_size_or_its_mtime_is_read_again(tmp_path: Path):
    import os

    root = write_project(tmp_path / "p", PROJECT)
    box = root / "pkg/box.py"
    assert name_spans(str(root), "size")["pkg/box.py"] == [(7, 7)]
    before = box.stat()
    box.write_text(PROJECT["pkg/box.py"].replace("box.size", "box.area"))  # the same size, a later mtime
    os.utime(box, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))
    assert box.stat().st_size == before.st_size and "pkg/box.py" not in name_spans(str(root), "size")
    before = box.stat()
    box.write_text(PROJECT["pkg/box.py"] + "\n\ndef double(box):\n    return 2 * box.size\n")
    os.utime(box, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same mtime (cp -p, tar, rsync -t)
    assert name_spans(str(root), "size")["pkg/box.py"] == [(7, 7), (11, 11)]
