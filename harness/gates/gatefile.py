"""Gate files: ``gates/*.yaml`` read strictly into validated ``Gate`` records.

Reading goes through ``mutations.document`` (SafeLoader composition: positions, duplicate keys
refused, object tags refused). Validation is strict and collects every problem of every file
before raising one ``GateFileError``; each problem reads
``file:line:col: gate 'id': what was wrong — the fix``. The JSON Schema in
``harness/gates/gate_schema.json`` states the same structure for editors and other tools; checks that
need the project (paths exist, mutation ids known, ids unique across files) are the loader's alone.
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from pathlib import Path, PurePosixPath
from typing import Sequence

from harness.config import COUNT_ASSERTIONS_ENV, load_config
from harness.errors import ConfigError, GateFileError
from harness.gates.model import (
    ARM_NAMES, Counts, Expectation, Gate, GateKind, LaneSide, Origin, RedSet, SourceState,
)
from harness.gates.kinds import KIND_NAMES, kind as kind_spec, kinds_with
from harness.gates.selections import Selections
from mutations.catalog import catalog_files, display_path
from mutations.document import DocumentError, Node, read_document
from mutations.model import Catalog
from mutations.shape import ID_PATTERN, ShapeChecker, describe, suggestion, versioned_list

GATE_FILE_VERSION = 1
#: The kind names (the registry: ``harness/gates/kinds.py``).
GATE_KINDS: tuple[GateKind, ...] = KIND_NAMES  # type: ignore[assignment]
#: Backends a lane-identity side may name.
LANE_BACKENDS: tuple[str, ...] = ("eager", "cpu-emulated", "cuda")
_LANE_KEYS = ("fingerprint", "control", "subject")
_GATE_KEYS = ("id", "kind", "title", "source", "select", "env", "arms", "timeout", "expect", "proof",
              "count_assertions", "collection_errors_are_red", *_LANE_KEYS)
_SOURCE_KEYS = ("tree", "mutation", "ref", "overlay")
_EXPECT_KEYS = ("red", "counts", "green_after", "lane")
_RED_KEYS = ("files", "nodeids", "count")
_COUNT_KEYS = ("cases", "passed", "failed", "assertions")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FINGERPRINT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")
#: A git ref name (no space ~ ^ : ? * [ \\, no leading '-', no '..') with optional ``~N``/``^N`` suffixes (``HEAD~1``).
_REF = re.compile(r"^(?!.*\.\.)[^\s~^:?*\[\\-][^\s~^:?*\[\\]*(?:[~^][0-9]*)*$")


def load_gate_files(paths: Sequence[Path], *, project_root: Path, catalog: Catalog) -> list[Gate]:
    """Every gate of ``paths`` (a folder stands for its ``*.yaml``/``*.yml``, sorted), validated.

    Raises ``GateFileError`` listing every problem found in every file.
    """
    problems: list[str] = []
    gates: list[Gate] = []
    documents = [_read_file(path, project_root) for path in catalog_files(paths)]
    selections = Selections()  # every file's named selections first: a gate may use one defined elsewhere
    for root, shape in documents:
        if root is not None and root.is_mapping:
            reader = _GateReader(shape, project_root, catalog, selections)
            selections.read(root.value.get("selections"), shape,
                            lambda entry, node: reader.suite_exists(entry, node, "selections", "entry"))
    for root, shape in documents:
        if root is not None:
            reader = _GateReader(shape, project_root, catalog, selections)
            gates.extend(g for i, node in enumerate(_entries(root, shape)) if (g := reader.gate(node, i)) is not None)
        problems.extend(shape.problems)
    problems.extend(selections.problems)
    problems.extend(_duplicate_ids(gates))
    if problems:
        raise GateFileError(problems)
    return gates


def _read_file(path: Path, project_root: Path) -> tuple[Node | None, ShapeChecker]:
    """The file's document (``None`` when it could not be read: the checker holds why)."""
    display = display_path(path, project_root)
    shape = ShapeChecker(display)
    if not os.path.lexists(path):  # a symlink loop exists: read_document names it
        shape.problems.append(f"{display}: no such gate file or folder; fix the path")
        return None, shape
    try:
        root = read_document(path, display)
    except DocumentError as exc:
        shape.problems.extend(exc.problems)
        return None, shape
    if root is None:
        shape.problems.append(f"{display}: the file is empty; write `version: 1` and `gates:` (a list of gates)")
    return root, shape


def _entries(root: Node, shape: ShapeChecker) -> list[Node]:
    return versioned_list(root, shape, "gate file", "gates", GATE_FILE_VERSION, "gates", extra=("selections",))


def _duplicate_ids(gates: list[Gate]) -> list[str]:
    seen: dict[str, Gate] = {}
    problems: list[str] = []
    for gate in gates:
        if gate.id in seen:
            problems.append(f"{gate.origin}: gate {gate.id!r}: id already used at {seen[gate.id].origin}; "
                            "gate ids are unique across all gate files, rename one")
        else:
            seen[gate.id] = gate
    return problems


class _GateReader:
    """Reads one gate mapping into a ``Gate``, recording problems on the file's ``ShapeChecker``."""

    def __init__(self, shape: ShapeChecker, project_root: Path, catalog: Catalog,
                 selections: Selections | None = None) -> None:
        self.shape = shape
        self.root = project_root
        self.catalog = catalog
        self.count_default = _count_default(project_root)
        self.selections = selections or Selections()

    def gate(self, node: Node, index: int) -> Gate | None:
        context = _context(node, index)
        if not self.shape.keys(node, context, _GATE_KEYS, required=("id", "kind")):
            return None
        before = len(self.shape.problems)
        fields = node.value
        gate_id = self.shape.string(fields["id"], context, "id", ID_PATTERN) if "id" in fields else None
        kind = self.shape.choice(fields["kind"], context, "kind", GATE_KINDS) if "kind" in fields else None
        values = self.common(fields, context, kind) if kind else {}
        if kind is not None:
            self.kind_rules(node, context, kind, values.get("source"))
        if gate_id is None or kind is None or len(self.shape.problems) > before:
            return None
        title = fields["title"].value if "title" in fields else gate_id
        return Gate(id=gate_id, kind=kind, title=title, origin=Origin(self.shape.display, node.line, node.column),
                    **values)

    def common(self, fields: dict[str, Node], context: str, kind: str) -> dict[str, object]:
        values: dict[str, object] = {}
        if "title" in fields:
            title = self.shape.string(fields["title"], context, "title")
            if title is not None:
                self.printable(title, fields["title"], context, "title")
        if "source" in fields:
            values["source"] = self.source(fields["source"], context)
        if "select" in fields:
            values["select"] = self.paths(fields["select"], context, "select")
        if "env" in fields:
            values["env"] = self.shape.string_map(fields["env"], context, "env", _ENV_NAME)
        if "arms" in fields:
            values["arms"] = self.arms(fields["arms"], context)
        if "timeout" in fields:
            values["timeout"] = self.timeout(fields["timeout"], context)
        if "expect" in fields:
            values["expect"] = self.expect(fields["expect"], context)
        if "proof" in fields:
            values["proof"] = self.proof(fields["proof"], context)
        count = self.shape.boolean(fields["count_assertions"], context, "count_assertions") \
            if "count_assertions" in fields else self.count_default
        if count:
            # Carried as the run's environment: a counting row never serves a gate that does not count.
            values["env"] = {**(values.get("env") or {}), COUNT_ASSERTIONS_ENV: "1"}
        if "collection_errors_are_red" in fields:
            named = self.paths(fields["collection_errors_are_red"], context, "collection_errors_are_red")
            if named and any("::" in entry for entry in named):
                self.shape.add(fields["collection_errors_are_red"], context, "'collection_errors_are_red' names "
                               "test FILES (or folders), not node ids: a collection error belongs to a file")
            values["collection_errors_are_red"] = named
        if kind == "lane-identity":
            values.update(self.lane(fields, context))
        return {key: value for key, value in values.items() if value is not None}

    def proof(self, node: Node, context: str) -> SourceState | None:
        """``proof: {mutation: ID}``: the mutation that shows a gate on the working tree can turn red."""
        if not self.shape.keys(node, context, ("mutation",), required=("mutation",)):
            return None
        mutation = self.mutation_id(node.value["mutation"], context)
        return SourceState(kind="mutation", mutation=mutation) if mutation else None

    def kind_rules(self, node: Node, context: str, kind: str, source: SourceState | None) -> None:
        """The rules that tie keys to kinds: lane fields, select, green_after, the source a kind needs."""
        fields = node.value
        spec = kind_spec(kind)
        if spec.lane_fields:
            for key in _LANE_KEYS:
                if key not in fields:
                    self.shape.add(node, context, f"missing required key {key!r} (kind {kind}); add it")
        else:
            for key in _LANE_KEYS:
                if key in fields:
                    self.shape.add(node.key_line_col(key), context,
                                   f"{key!r} is a lane field, for {kinds_with('lane_fields')} only; remove it")
            if "select" not in fields:
                self.shape.add(node, context, "missing required key 'select' (the pytest paths or node ids "
                                              "the gate runs); add it")
        self.expect_rules(node, context, kind)
        self.source_rules(node, context, kind, source)
        if "collection_errors_are_red" in fields and not spec.red_first_fields:
            self.shape.add(node.key_line_col("collection_errors_are_red"), context,
                           f"'collection_errors_are_red' is for {kinds_with('red_first_fields')} only (a test that cannot import "
                           "the old code's missing feature); remove it")
        if "proof" in fields and (spec.runs_its_own or (source is not None and source.kind != "tree")):
            self.shape.add(node.key_line_col("proof"), context,
                           "'proof' is for a gate judged on the working tree (its own source already proves it "
                           "can turn red); remove it")

    def expect_rules(self, node: Node, context: str, kind: str) -> None:
        spec = kind_spec(kind)
        expect = node.value.get("expect")
        given = expect.value if expect is not None and expect.is_mapping else {}
        if "green_after" in given and not spec.red_first_fields:
            self.shape.add(expect.key_line_col("green_after"), context,  # type: ignore[union-attr]
                           f"'expect.green_after' is for {kinds_with('red_first_fields')} only; remove it")
        if "lane" in given and not spec.lane_fields:
            self.shape.add(expect.key_line_col("lane"), context,  # type: ignore[union-attr]
                           f"'expect.lane' is for {kinds_with('lane_fields')} only; remove it")
        if spec.lane_fields and "lane" not in given:
            self.shape.add(expect or node, context, "missing 'expect: {lane: same}' (or different); "
                                                    "a lane-identity gate must say what it expects")

    def source_rules(self, node: Node, context: str, kind: str, source: SourceState | None) -> None:
        if source is None and "source" in node.value:
            return  # the source itself was wrong and is reported already
        spec = kind_spec(kind)
        kind_of_source = source.kind if source is not None else "tree"
        where = node.value.get("source", node)
        if spec.source == "changed" and kind_of_source == "tree":
            self.shape.add(where, context, "a red-first gate must be red against the UNMIGRATED code: give "
                                           "source {mutation: ID} or {ref: REF, overlay: [new test paths]}")
        misspelt = any(key not in _GATE_KEYS for key in node.value)  # reported already; it may be 'expcet'
        if "expect" not in node.value and not misspelt and kind_of_source != "tree" and not spec.lane_fields:
            self.shape.add(node, context, "missing 'expect': a gate on changed code must say which cases turn red "
                                          "(expect: {red: {nodeids: [...]}}); write expect: {red: {count: 0}} if "
                                          "it really means all green")
        if spec.source == "mutation" and kind_of_source != "mutation":
            article = "an" if kind[0] in "aeiou" else "a"
            self.shape.add(where, context, f"{article} {kind} gate judges what a named mutation reds: give "
                                           "source {mutation: ID}")

    def source(self, node: Node, context: str) -> SourceState | None:
        if not self.shape.keys(node, context, _SOURCE_KEYS):
            return None
        fields = node.value
        chosen = [key for key in ("tree", "mutation", "ref") if key in fields]
        if "overlay" in fields and "ref" not in fields:
            self.shape.add(node.key_line_col("overlay"), context,
                           "'source.overlay' needs 'source.ref' (the overlay is laid over a git ref's tree); "
                           "add ref: origin/main or remove overlay")
            return None
        if len(chosen) != 1:
            self.shape.add(node, context, "'source' must hold exactly one of tree, mutation, ref; got "
                                          f"{', '.join(chosen) or 'none'}")
            return None
        return self.source_of(chosen[0], fields, context)

    def source_of(self, key: str, fields: dict[str, Node], context: str) -> SourceState | None:
        value = fields[key]
        if key == "tree":
            return SourceState() if self.shape.choice(value, context, "source.tree", ("working",)) else None
        if key == "mutation":
            mutation = self.mutation_id(value, context)
            return SourceState(kind="mutation", mutation=mutation) if mutation else None
        ref = self.shape.string(value, context, "source.ref")
        if ref is not None and not _REF.match(ref):
            self.shape.add(value, context, f"'source.ref' {ref!r} is not a git ref name; write e.g. origin/main")
            return None
        overlay = self.paths(fields["overlay"], context, "source.overlay") if "overlay" in fields else ()
        return None if ref is None or overlay is None else SourceState(kind="ref", ref=ref, overlay=overlay)

    def mutation_id(self, node: Node, context: str) -> str | None:
        mutation = self.shape.string(node, context, "source.mutation")
        if mutation is None or mutation in self.catalog:
            return mutation
        known = ", ".join(self.catalog.ids()[:12]) or "none: the catalog is empty"
        self.shape.add(node, context, f"unknown mutation {mutation!r}{suggestion(mutation, self.catalog.ids())} "
                                      f"(known: {known}); add it to mutations/catalog or fix the id")
        return None

    def paths(self, node: Node, context: str, key: str) -> tuple[str, ...] | None:
        """A list of project paths or pytest node ids, each of which must exist in the working tree."""
        items = self.shape.string_list(node, context, key)
        if items is None:
            return None
        items = self.selections.expand(items, self.shape, context)  # ``@name`` -> its paths (harness/gates/selections.py)
        if items is None:
            return None
        good = [value for value, item in items if self.suite_exists(value, item, context, key)]
        return tuple(good) if len(good) == len(items) else None

    def printable(self, value: str, node: Node, context: str, key: str) -> bool:
        """No control character (ESC, CR, NUL, ...): a string seamgate prints must not drive the terminal."""
        bad = next((ch for ch in value if unicodedata.category(ch) == "Cc"), None)
        if bad is None:
            return True
        self.shape.add(node, context, f"{key} {value!r} holds the control character U+{ord(bad):04X}; a gate's "
                                      "strings are printed to terminals and Markdown, where it would act, not "
                                      "show: remove it")
        return False

    def suite_exists(self, value: str, node: Node, context: str, key: str) -> bool:
        if not self.printable(value, node, context, f"{key} entry"):
            return False
        if value.startswith("-"):
            self.shape.add(node, context, f"{key} entry {value!r} is a pytest option; {key} holds paths or node "
                                          "ids only (put -k/-m style selection into node ids)")
            return False
        file_part = value.split("::", 1)[0]
        path = PurePosixPath(file_part)
        if path.is_absolute() or ".." in path.parts or "\\" in file_part:
            self.shape.add(node, context, f"{key} entry {value!r} must be relative to the project root, "
                                          "with '/' and no '..'")
            return False
        if (self.root / file_part).exists():
            return True
        self.shape.add(node, context, f"unknown suite {value!r}: {file_part} does not exist under the project "
                                      f"root {self.root}{_sibling_hint(self.root, path)}; fix the path")
        return False

    def arms(self, node: Node, context: str) -> tuple[str, ...] | None:
        items = self.shape.string_list(node, context, "arms")
        if items is None:
            return None
        arms = [self.shape.choice(item, context, "arms[]", ARM_NAMES) for _, item in items]
        if None in arms:
            return None
        if len(set(arms)) != len(arms):
            self.shape.add(node, context, "'arms' names an arm twice; list each once")
            return None
        return tuple(arms)  # type: ignore[arg-type]

    def timeout(self, node: Node, context: str) -> float | None:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
            got = f"{value!r}, which is no limit at all" if isinstance(value, float) and math.isinf(value) else \
                f"{value!r}, not a number" if isinstance(value, float) and math.isnan(value) else describe(value)
            self.shape.add(node, context, f"'timeout' must be a number of seconds > 0 (finite), got {got}; write "
                                          "e.g. `timeout: 600`, or leave it out to derive the limit from the "
                                          "baseline's duration")
            return None
        return float(value)

    def expect(self, node: Node, context: str) -> Expectation | None:
        if not self.shape.keys(node, context, _EXPECT_KEYS):
            return None
        fields = node.value
        red = self.red(fields["red"], context) if "red" in fields else RedSet(count=0)
        counts = self.counts(fields["counts"], context) if "counts" in fields else None
        green_after = self.shape.boolean(fields["green_after"], context, "expect.green_after") \
            if "green_after" in fields else False
        lane = self.shape.choice(fields["lane"], context, "expect.lane", ("same", "different")) \
            if "lane" in fields else None
        if red is None or ("counts" in fields and counts is None) or green_after is None \
                or ("lane" in fields and lane is None):
            return None
        return Expectation(red=red, counts=counts, green_after=green_after, lane=lane)  # type: ignore[arg-type]

    def red(self, node: Node, context: str) -> RedSet | None:
        if not self.shape.keys(node, context, _RED_KEYS):
            return None
        chosen = [key for key in _RED_KEYS if key in node.value]
        if len(chosen) != 1:
            self.shape.add(node, context, "'expect.red' must hold exactly one of files, nodeids, count; got "
                                          f"{', '.join(chosen) or 'none'}")
            return None
        key = chosen[0]
        if key == "count":
            count = self.shape.integer(node.value["count"], context, "expect.red.count", minimum=0)
            return None if count is None else RedSet(count=count)
        paths = self.paths(node.value[key], context, f"expect.red.{key}")
        return None if paths is None else RedSet(**{key: paths})

    def counts(self, node: Node, context: str) -> Counts | None:
        if not self.shape.keys(node, context, _COUNT_KEYS):
            return None
        values = {key: self.shape.integer(value, context, f"expect.counts.{key}", minimum=0)
                  for key, value in node.value.items()}
        return None if None in values.values() else Counts(**values)  # type: ignore[arg-type]

    def lane(self, fields: dict[str, Node], context: str) -> dict[str, object]:
        values: dict[str, object] = {}
        if "fingerprint" in fields:
            fingerprint = self.shape.string(fields["fingerprint"], context, "fingerprint")
            if fingerprint is not None and not _FINGERPRINT.match(fingerprint):
                self.shape.add(fields["fingerprint"], context, f"'fingerprint' {fingerprint!r} must be "
                                                               "module:callable, e.g. drivers.draft:lane_fingerprint")
            values["fingerprint"] = fingerprint
        for side in ("control", "subject"):
            if side in fields:
                values[side] = self.lane_side(fields[side], context, side)
        return values

    def lane_side(self, node: Node, context: str, side: str) -> LaneSide | None:
        if not self.shape.keys(node, f"{context} {side}", ("backend", "env"), required=("backend",)):
            return None
        backend = self.shape.choice(node.value["backend"], context, f"{side}.backend", LANE_BACKENDS) \
            if "backend" in node.value else None
        env = self.shape.string_map(node.value["env"], context, f"{side}.env", _ENV_NAME) \
            if "env" in node.value else {}
        return None if backend is None or env is None else LaneSide(backend=backend, env=env)


def _count_default(project_root: Path) -> bool:
    """``[tool.seamgate] count_assertions`` of the project (a bad table is reported by the config's reader)."""
    try:
        return load_config(project_root).count_assertions
    except (ConfigError, OSError):
        return False


def _context(node: Node, index: int) -> str:
    gate_id = node.value.get("id") if node.is_mapping else None
    if gate_id is not None and isinstance(gate_id.value, str):
        return f"gate {gate_id.value!r}"
    return f"gate #{index + 1}"


def _sibling_hint(root: Path, path: PurePosixPath) -> str:
    folder = root / path.parent
    if not folder.is_dir():
        return ""
    siblings = [(path.parent / p.name).as_posix() for p in folder.iterdir() if not p.name.startswith(".")]
    return suggestion(path.as_posix(), siblings)
