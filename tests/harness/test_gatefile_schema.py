"""The published JSON Schema and the loader agree: both accept the valid examples, both refuse the
structurally invalid ones, and the repository's own gate files validate against the schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from harness.errors import GateFileError
from harness.gates.gatefile import load_gate_files
from mutations.catalog import load_catalog

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "harness/gates/gate_schema.json").read_text())

PROJECT = {
    "tests/seam/test_scope.py": "def test_join(): pass\n",
    "tests/drivers/test_dense_seam.py": "def test_dense(): pass\n",
    "drivers/dense.py": "X = 1\n",
    "mutations/catalog/core.yaml": (
        "version: 1\nmutations:\n"
        "  - {id: unmigrate-dense, title: t, target: drivers/dense.py, replace: {old: 'X = 1', new: 'X = 2'}}\n"
        "  - {id: draft-double-forward, title: t, target: drivers/dense.py, delete: \"X = 1\\n\"}\n"
    ),
}

VALID = {
    "isolation-from-the-docs": """
version: 1
gates:
  - id: g2-isolation-dense
    kind: isolation
    title: "unmigrate-dense reds only the dense seam test file"
    source: {mutation: unmigrate-dense}
    select: [tests/drivers, tests/seam]
    env: {SEAM_CUDAGRAPH: "1"}
    arms: [cpu-emulated, cuda]
    timeout: 120
    expect:
      red: {files: [tests/drivers/test_dense_seam.py]}
      counts: {cases: 3, passed: 0, failed: 3, assertions: 7}
""",
    "lane-identity-from-the-docs": """
version: 1
gates:
  - id: lane-draft
    kind: lane-identity
    fingerprint: drivers.draft:lane_fingerprint
    control: {backend: eager, env: {}}
    subject: {backend: cpu-emulated, env: {SEAM_CUDAGRAPH: "0"}}
    source: {mutation: draft-double-forward}
    expect: {lane: same}
""",
    "red-first-against-a-ref-with-overlay": """
version: 1
gates:
  - id: rf-dense
    kind: red-first
    source: {ref: origin/main, overlay: [tests/drivers/test_dense_seam.py]}
    select: ["tests/drivers/test_dense_seam.py::test_dense"]
    expect: {red: {nodeids: ["tests/drivers/test_dense_seam.py::test_dense"]}, green_after: true}
""",
    "replay-on-the-working-tree-with-defaults": """
version: 1
gates:
  - {id: g1-replay, kind: replay, source: {tree: working}, select: [tests/seam], expect: {red: {count: 0}}}
  - {id: g5.platforms, kind: platforms, select: [tests/seam/test_scope.py], arms: [cpu-emulated, cuda, rocm]}
""",
    "no-gates-yet": "version: 1\ngates: []\n",
}

# name -> (gate file text, a fragment the loader's message must contain)
INVALID = {
    "unknown-key": ("- {id: a, kind: replay, select: [tests/seam], expcet: {}}", "unknown key 'expcet' — did you mean 'expect'?"),
    "unknown-kind": ("- {id: a, kind: replays, select: [tests/seam]}", "'kind' must be one of replay"),
    "bad-id": ("- {id: A_B, kind: replay, select: [tests/seam]}", "'id' value 'A_B' does not match"),
    "missing-id": ("- {kind: replay, select: [tests/seam]}", "gate #1: missing required key 'id'"),
    "missing-select": ("- {id: a, kind: replay}", "missing required key 'select'"),
    "select-not-a-list": ("- {id: a, kind: replay, select: tests/seam}", "'select' must be a list of strings"),
    "env-number": ("- {id: a, kind: replay, select: [tests/seam], env: {SEAM_CUDAGRAPH: 1}}", "quote it: SEAM_CUDAGRAPH: \"1\""),
    "unknown-arm": ("- {id: a, kind: replay, select: [tests/seam], arms: [tpu]}", "'arms[]' must be one of cpu-emulated"),
    "zero-timeout": ("- {id: a, kind: replay, select: [tests/seam], timeout: 0}", "'timeout' must be a number of seconds > 0"),
    "two-red-forms": ("- {id: a, kind: replay, select: [tests/seam], expect: {red: {count: 1, files: [tests/seam]}}}", "exactly one of files, nodeids, count"),
    "negative-count": ("- {id: a, kind: replay, select: [tests/seam], expect: {counts: {failed: -1}}}", "'expect.counts.failed' must be >= 0"),
    "overlay-without-ref": ("- {id: a, kind: replay, select: [tests/seam], source: {overlay: [tests/seam]}}", "'source.overlay' needs 'source.ref'"),
    "two-sources": ("- {id: a, kind: replay, select: [tests/seam], source: {tree: working, mutation: unmigrate-dense}}", "exactly one of tree, mutation, ref"),
    "green-after-outside-red-first": ("- {id: a, kind: replay, select: [tests/seam], expect: {green_after: true}}", "'expect.green_after' is for kind 'red-first' only"),
    "lane-field-outside-lane-identity": ("- {id: a, kind: replay, select: [tests/seam], fingerprint: 'a:b'}", "'fingerprint' is a lane field"),
    "lane-expectation-outside-lane-identity": ("- {id: a, kind: replay, select: [tests/seam], expect: {lane: same}}", "'expect.lane' is for kind 'lane-identity' only"),
    "lane-identity-without-fingerprint": ("- {id: a, kind: lane-identity, control: {backend: eager}, subject: {backend: cuda}, expect: {lane: same}}", "missing required key 'fingerprint'"),
    "lane-identity-without-expectation": ("- {id: a, kind: lane-identity, fingerprint: 'm:f', control: {backend: eager}, subject: {backend: cuda}}", "missing 'expect: {lane: same}'"),
    "bad-backend": ("- {id: a, kind: lane-identity, fingerprint: 'm:f', control: {backend: tpu}, subject: {backend: cuda}, expect: {lane: same}}", "'control.backend' must be one of eager"),
    "red-first-on-the-working-tree": ("- {id: a, kind: red-first, select: [tests/seam]}", "must be red against the UNMIGRATED code"),
    "isolation-without-mutation": ("- {id: a, kind: isolation, select: [tests/seam]}", "an isolation gate judges what a named mutation reds"),
}


def gate_file(body: str) -> str:
    return "version: 1\ngates:\n  " + body + "\n"


def load(tmp_path: Path, text: str) -> list:
    for name, content in PROJECT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    (tmp_path / "gates.yaml").write_text(text)
    catalog = load_catalog([tmp_path / "mutations/catalog"], project_root=tmp_path)
    return load_gate_files([tmp_path / "gates.yaml"], project_root=tmp_path, catalog=catalog)


def schema_errors(text: str) -> list[str]:
    return [e.message for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(yaml.safe_load(text))]


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_examples_load_and_satisfy_the_schema(tmp_path: Path, name: str) -> None:
    load(tmp_path, VALID[name])
    assert schema_errors(VALID[name]) == []


@pytest.mark.parametrize("name", sorted(INVALID))
def test_structurally_invalid_examples_are_refused_by_loader_and_schema(tmp_path: Path, name: str) -> None:
    body, fragment = INVALID[name]
    with pytest.raises(GateFileError) as caught:
        load(tmp_path, gate_file(body))
    assert fragment in str(caught.value)
    assert schema_errors(gate_file(body)) != [], f"the schema accepts {name!r}, which the loader refuses"


def test_the_repository_gate_files_satisfy_the_schema() -> None:
    for path in sorted((REPO / "gates").glob("*.y*ml")):
        errors = schema_errors(path.read_text())
        assert errors == [], f"{path.name}: {errors}"
