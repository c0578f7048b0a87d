"""Loading gate files: valid files become Gate records; every mistake is named file:line:col with its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import GateFileError
from harness.gates.gatefile import load_gate_files
from harness.gates.model import Counts, Expectation, Gate, LaneSide, Origin, RedSet, SourceState
from mutations.model import Catalog, Location, Mutation

CATALOG = Catalog(tuple(
    Mutation(id=i, title="t", target="drivers/dense.py", op="delete", location=Location("c.yaml"), anchor="x")
    for i in ("unmigrate-dense", "unmigrate-moe", "draft-double-forward")
))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for name in ("tests/seam/test_scope.py", "tests/drivers/test_dense_seam.py", "tests/drivers/test_moe_seam.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("def test_x(): pass\n")
    (tmp_path / "gates").mkdir()
    return tmp_path


def write(root: Path, name: str, text: str | bytes) -> Path:
    path = root / "gates" / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def load(root: Path, *paths: Path) -> list[Gate]:
    return load_gate_files(list(paths) or [root / "gates"], project_root=root, catalog=CATALOG)


def problems(root: Path, *paths: Path) -> str:
    with pytest.raises(GateFileError) as caught:
        load(root, *paths)
    return str(caught.value)


def test_an_isolation_gate_loads_into_the_record_the_executor_consumes(root: Path) -> None:
    write(root, "g2.yaml", (
        "version: 1\ngates:\n"
        "  - id: g2-isolation-dense\n"
        "    kind: isolation\n"
        "    title: only the dense seam file\n"
        "    source: {mutation: unmigrate-dense}\n"
        "    select: [tests/drivers, 'tests/seam/test_scope.py::test_x']\n"
        "    env: {SEAM_CUDAGRAPH: '1'}\n"
        "    arms: [cpu-emulated, cuda]\n"
        "    timeout: 120\n"
        "    expect:\n"
        "      red: {files: [tests/drivers/test_dense_seam.py]}\n"
        "      counts: {cases: 3, passed: 0, failed: 3, assertions: 7}\n"
    ))
    assert load(root) == [Gate(
        id="g2-isolation-dense", kind="isolation", title="only the dense seam file",
        origin=Origin("gates/g2.yaml", 3, 5), source=SourceState(kind="mutation", mutation="unmigrate-dense"),
        select=("tests/drivers", "tests/seam/test_scope.py::test_x"), env={"SEAM_CUDAGRAPH": "1"},
        arms=("cpu-emulated", "cuda"), timeout=120.0,
        expect=Expectation(red=RedSet(files=("tests/drivers/test_dense_seam.py",)),
                           counts=Counts(cases=3, passed=0, failed=3, assertions=7)),
    )]


def test_a_lane_identity_gate_needs_no_select_and_defaults_its_title_to_its_id(root: Path) -> None:
    write(root, "lane.yaml", (
        "version: 1\ngates:\n"
        "  - {id: lane-draft, kind: lane-identity, fingerprint: 'drivers.draft:lane_fingerprint',\n"
        "     control: {backend: eager}, subject: {backend: cpu-emulated, env: {SEAM_CUDAGRAPH: '0'}},\n"
        "     expect: {lane: same}}\n"
    ))
    [gate] = load(root)
    assert gate.title == "lane-draft" and gate.select == () and gate.source == SourceState()
    assert gate.control == LaneSide("eager", {}) and gate.subject == LaneSide("cpu-emulated", {"SEAM_CUDAGRAPH": "0"})
    assert gate.expect.lane == "same" and gate.fingerprint == "drivers.draft:lane_fingerprint"


def test_an_unknown_key_points_at_the_key_and_suggests_the_close_one(root: Path) -> None:
    write(root, "g.yaml", "version: 1\ngates:\n  - id: g2-dense\n    kind: replay\n    select: [tests/seam]\n    expcet: {}\n")
    assert problems(root).startswith(
        "gates/g.yaml:6:5: gate 'g2-dense': unknown key 'expcet' — did you mean 'expect'? (allowed: id, kind,")


def test_every_problem_of_a_file_is_reported_at_once(root: Path) -> None:
    write(root, "g.yaml", "version: 2\ngates:\n  - {id: a, kind: replay, select: [tests/nope]}\n"
                          "  - {id: b, kind: rule, select: [tests/seam], source: {mutation: unmigrate-dens}}\n")
    message = problems(root)
    assert message.startswith("3 problems in the gate files:")
    assert "gates/g.yaml:1:10: gate file: 'version' must be 1, got an integer 2" in message
    assert "gate 'a': unknown suite 'tests/nope'" in message
    assert "gate 'b': unknown mutation 'unmigrate-dens' — did you mean 'unmigrate-dense'?" in message


def test_a_node_id_is_checked_by_its_file_part_with_a_suggestion(root: Path) -> None:
    write(root, "g.yaml", "version: 1\ngates:\n  - {id: a, kind: replay, select: ['tests/seam/test_scop.py::test_x']}\n")
    assert "unknown suite 'tests/seam/test_scop.py::test_x'" in problems(root)
    assert "did you mean 'tests/seam/test_scope.py'?" in problems(root)


def test_select_refuses_pytest_options_and_paths_that_leave_the_project(root: Path) -> None:
    write(root, "g.yaml", "version: 1\ngates:\n  - {id: a, kind: replay, select: ['-k', '../other']}\n")
    message = problems(root)
    assert "select entry '-k' is a pytest option" in message
    assert "select entry '../other' must be relative to the project root" in message


def test_a_gate_id_used_twice_across_files_names_both_places(root: Path) -> None:
    write(root, "a.yaml", "version: 1\ngates:\n  - {id: g1, kind: replay, select: [tests/seam]}\n")
    write(root, "b.yml", "version: 1\ngates:\n\n  - {id: g1, kind: replay, select: [tests/seam]}\n")
    assert problems(root) == "gates/b.yml:4:5: gate 'g1': id already used at gates/a.yaml:3:5; gate ids are " \
                             "unique across all gate files, rename one"


def test_a_duplicate_yaml_key_is_refused_though_safe_load_would_accept_it(root: Path) -> None:
    write(root, "g.yaml", "version: 1\ngates:\n  - id: a\n    kind: replay\n    select: [tests/seam]\n    kind: rule\n")
    assert "gates/g.yaml:6:5: duplicate key 'kind' (first at line 4, column 5); keep one of them" in problems(root)


@pytest.mark.parametrize("text, fragment", [
    ("", "gates/g.yaml: the file is empty; write `version: 1`"),
    ("- just\n- a list\n", "gates/g.yaml:1:1: gate file: expected a mapping, got a list"),
    (b"version: 1\ngates: [\xfe]\n", "gates/g.yaml:2:9: byte 0xfe is not UTF-8"),
    ("version: 1\ngates: {\n", "gates/g.yaml:3:1: not valid YAML"),
    ("gates: !!python/object/apply:os.system [echo]\nversion: 1\n", "YAML tag '!!python/object/apply:os.system' is refused"),
])
def test_files_that_are_not_plain_yaml_mappings_are_refused(root: Path, text: str | bytes, fragment: str) -> None:
    write(root, "g.yaml", text)
    assert fragment in problems(root)


def test_a_huge_file_is_refused_before_it_is_parsed(root: Path) -> None:
    write(root, "g.yaml", "version: 1\ngates: []\n" + "#" * (1024 * 1024))
    assert "over the 1048576-byte limit" in problems(root)


def test_a_named_gate_file_that_does_not_exist_is_an_error(root: Path) -> None:
    assert "gates/missing.yaml: no such gate file or folder" in problems(root, root / "gates/missing.yaml")


def test_a_folder_stands_for_its_yaml_files_in_name_order(root: Path) -> None:
    write(root, "b.yaml", "version: 1\ngates:\n  - {id: second, kind: replay, select: [tests/seam]}\n")
    write(root, "a.yml", "version: 1\ngates:\n  - {id: first, kind: replay, select: [tests/seam]}\n")
    write(root, "notes.txt", "not a gate file")
    assert [g.id for g in load(root)] == ["first", "second"]
