"""Named selections: defined once under `selections:` in any gate file, used as `@name` in any gate's
select, expanded in place; unknown, duplicate and cyclic names are refused with file:line:col."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import GateFileError
from harness.gates.gatefile import load_gate_files
from mutations.model import Catalog
from tests.reports.fixture_projects import write_project

DEFINES = (
    "version: 1\n"
    "selections:\n"
    "  calc: [tests/test_add.py, tests/test_mul.py]\n"
    "  everything: ['@calc', tests]\n"
    "gates:\n"
    "  - {id: a, kind: replay, select: ['@calc']}\n"
)
USES = (
    "version: 1\n"
    "gates:\n"
    "  - {id: b, kind: replay, select: [tests/test_mul.py, '@calc']}\n"
    "  - {id: c, kind: replay, select: ['@everything']}\n"
)


def load(tmp_path: Path, **files: str):
    root = write_project(tmp_path / "p")
    (root / "gates").mkdir()
    for name, text in files.items():
        (root / "gates" / f"{name}.yaml").write_text(text)
    return load_gate_files([root / "gates"], project_root=root, catalog=Catalog(mutations=()))


def test_a_selection_defined_in_one_file_is_expanded_in_place_in_every_file_without_repeats(tmp_path: Path):
    gates = {g.id: g.select for g in load(tmp_path, a=DEFINES, b=USES)}
    assert gates == {"a": ("tests/test_add.py", "tests/test_mul.py"),
                     "b": ("tests/test_mul.py", "tests/test_add.py"),
                     "c": ("tests/test_add.py", "tests/test_mul.py", "tests")}


@pytest.mark.parametrize("files, message", [
    ({"b": USES}, "gates/b.yaml:3:55: gate 'b': unknown selection @calc (known: none defined); define it under "
                  "'selections:' in a gate file"),
    ({"a": DEFINES, "b": DEFINES.replace("id: a", "id: z")},
     "gates/b.yaml:3:9: selection 'calc' is already defined at gates/a.yaml:3:9"),
    ({"a": "version: 1\nselections:\n  x: ['@y']\n  y: ['@x']\ngates:\n  - {id: a, kind: replay, select: ['@x']}\n"},
     "selection @x uses itself (@x -> @y -> @x); break the cycle"),
    ({"a": DEFINES.replace("[tests/test_add.py,", "[tests/test_nope.py,")},
     "gates/a.yaml:3:10: selections: unknown suite 'tests/test_nope.py'"),
    ({"a": "version: 1\nselections: [tests]\ngates:\n  - {id: a, kind: replay, select: [tests]}\n"},
     "gates/a.yaml:2:13: selections: 'selections' must map names to lists of test paths"),
])
def test_a_bad_selection_is_refused_naming_the_file_the_line_and_the_fix(tmp_path: Path, files, message):
    with pytest.raises(GateFileError) as caught:
        load(tmp_path, **files)
    assert message in str(caught.value)


def test_the_bundled_gates_list_each_drivers_test_files_once():
    root = Path(__file__).resolve().parents[2]
    texts = "".join(p.read_text() for p in sorted((root / "gates").glob("*.yaml")))
    assert texts.count("tests/drivers/test_dense_battery.py,") + texts.count("tests/drivers/test_dense_battery.py]") == 1
    assert texts.count("tests/drivers/test_dense_seam.py,") == 1
