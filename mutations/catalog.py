"""The mutation catalog: ``mutations/catalog/*.yaml`` read strictly into a ``Catalog``.

Every problem of every catalog file is collected and raised together as one
``MutationCatalogError``; each names ``file:line:column``, the entry, the key and the fix.
A catalog that loads is well-formed; whether each mutation still APPLIES to today's code is a
separate question (``mutations.check``), because rot is a property of the code, not of the file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Sequence

from mutations import operators
from mutations.document import DocumentError, Node, read_document
from mutations.errors import MutationCatalogError, MutationTargetError
from mutations.model import STEPS, Catalog, Location, Mutation
from mutations.operators import OperatorSpec
from mutations.patch import PatchFormatError, parse_patch
from mutations.shape import ID_PATTERN, ShapeChecker, versioned_list
from mutations.target import resolve_target, target_problem

CATALOG_VERSION = 1
#: A qualified name: dotted Python identifiers (``Class.method``, ``function``).
QUALNAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _entry_keys() -> tuple[str, ...]:
    """The keys of an entry; the operation keys are the registry's (``mutations.operators``), read at each call."""
    return ("id", "title", "target", *operators.names(), "occurrence", STEPS)


def _step_keys() -> tuple[str, ...]:
    """The keys of one item of ``steps:``: one operation and its ``occurrence``."""
    return (*operators.names(), "occurrence")


def catalog_files(paths: Sequence[Path]) -> list[Path]:
    """The YAML files named by ``paths``: a directory stands for its ``*.yaml``/``*.yml``, sorted."""
    files: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        try:
            is_dir = path.is_dir()
        except OSError:  # a symlink loop: read_document says so, naming the file
            is_dir = False
        found = sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml")) if is_dir else [path]
        for f in found:
            key = _identity(f)
            if key not in seen:  # one file named twice (or through a link) is read once
                seen.add(key)
                files.append(f)
    return files


def _identity(path: Path) -> Path:
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return path.absolute()


def display_path(path: Path, project_root: Path) -> str:
    """``path`` as the user should read it: relative to the project root when inside it."""
    # The path as NAMED (links not followed: a link to /dev/zero or to itself is shown by its own name).
    for named, root in ((Path(os.path.abspath(path)), Path(os.path.abspath(project_root))),
                        (Path(os.path.abspath(path)), project_root.resolve())):
        try:
            return named.relative_to(root).as_posix()
        except ValueError:
            continue
    return str(path)


def load_catalog(paths: Sequence[Path], *, project_root: Path) -> Catalog:
    """Read and validate every catalog file; ``MutationCatalogError`` listing all problems."""
    problems: list[str] = []
    mutations: list[Mutation] = []
    files = catalog_files(paths)
    for path in files:
        entries, file_problems = _load_file(path, project_root)
        problems.extend(file_problems)
        mutations.extend(entries)
    problems.extend(_duplicate_ids(mutations))
    if problems:
        raise MutationCatalogError(problems)
    return Catalog(tuple(mutations), tuple(display_path(p, project_root) for p in files))


def _load_file(path: Path, project_root: Path) -> tuple[list[Mutation], list[str]]:
    display = display_path(path, project_root)
    if not path.exists():
        return [], [f"{display}: no such catalog file; fix the path or create it"]
    try:
        root = read_document(path, display)
    except DocumentError as exc:
        return [], exc.problems
    shape = ShapeChecker(display)
    if root is None:
        return [], [f"{display}: the file is empty; write `version: 1` and `mutations:` (a list)"]
    entries = _entries(root, shape)
    mutations = [m for m in (_entry(e, shape, path, project_root) for e in entries) if m is not None]
    return mutations, shape.problems


def _entries(root: Node, shape: ShapeChecker) -> list[Node]:
    return versioned_list(root, shape, "catalog", "mutations", CATALOG_VERSION, "entries")


def _entry(node: Node, shape: ShapeChecker, path: Path, project_root: Path) -> Mutation | None:
    context = _context(node)
    if not shape.keys(node, context, _entry_keys(), required=("id", "title", "target")):
        return None
    before = len(shape.problems)
    fields = node.value
    mutation_id = shape.string(fields["id"], context, "id", ID_PATTERN) if "id" in fields else None
    title = shape.string(fields["title"], context, "title") if "title" in fields else None
    target = _target(fields["target"], shape, context, project_root) if "target" in fields else None
    if STEPS in fields:
        ops = _steps(node, shape, context, path)
    else:
        one = _one_operation(node, shape, context, path)
        ops = None if one is None else [one]
    if len(shape.problems) > before or None in (mutation_id, title, target, ops):
        return None
    parts = [Mutation(id=mutation_id, title=title, target=target, **op) for op in ops]  # type: ignore[arg-type]
    if STEPS not in fields:
        return _check_patch_path(parts[0], shape, node)
    if any(_check_patch_path(part, shape, node) is None for part in parts):
        return None
    return Mutation(id=mutation_id, title=title, target=target, op=STEPS,  # type: ignore[arg-type]
                    location=Location(shape.display, node.line, node.column), steps=tuple(parts))


def _one_operation(node: Node, shape: ShapeChecker, context: str, path: Path) -> dict[str, object] | None:
    """The fields of the one operation written in mapping ``node`` (an entry, or one of its ``steps``)."""
    before = len(shape.problems)
    op = _op(node, shape, context)
    operation = _operation(node.value[op], operators.operator(op), shape, context, path) if op else None
    occurrence = _occurrence(node, op, shape, context)
    if len(shape.problems) > before or operation is None:
        return None
    return {"op": op, "location": Location(shape.display, node.line, node.column), "anchor": "", "text": "",
            "occurrence": occurrence, "patch": None, "patch_file": None, "name": None, **operation}


def _steps(node: Node, shape: ShapeChecker, context: str, path: Path) -> list[dict[str, object]] | None:
    """The operations of ``steps:``, in order; each item is a mapping holding exactly one operation."""
    beside = [key for key in _step_keys() if key in node.value]
    if beside:
        shape.add(node.key_line_col(beside[0]), context,
                  f"'{beside[0]}' next to 'steps'; move it into one item of the steps list")
        return None
    items = node.value[STEPS]
    if not items.is_sequence or not items.value:
        shape.add(items, context, "'steps' must be a non-empty list of operations, one mapping each "
                                  "(e.g. `- replace-def: {name: ..., text: ...}`)")
        return None
    ops: list[dict[str, object]] = []
    for number, item in enumerate(items.value, start=1):
        where = f"{context} step {number}"
        if not item.is_mapping:
            shape.add(item, where, "a step is a mapping with one operation key, e.g. `- delete-call: {name: ..., call: ...}`")
            continue
        if not shape.keys(item, where, _step_keys()):
            continue
        op = _one_operation(item, shape, where, path)
        if op is not None:
            ops.append(op)
    return ops if len(ops) == len(items.value) else None


def _context(node: Node) -> str:
    if node.is_mapping and isinstance(node.value.get("id", Node(None, 0, 0)).value, str):
        return f"mutation {node.value['id'].value!r}"
    return "mutation entry"


def _target(node: Node, shape: ShapeChecker, context: str, project_root: Path) -> str | None:
    target = shape.string(node, context, "target")
    if target is None:
        return None
    problem = target_problem(target)
    if problem is None:
        try:
            resolve_target(project_root, target)
        except MutationTargetError as exc:
            problem = str(exc)
    if problem is not None:
        shape.add(node, context, problem)
        return None
    return target


def _op(node: Node, shape: ShapeChecker, context: str) -> str | None:
    names = operators.names()
    present = [key for key in names if key in node.value]
    if len(present) == 1:
        return present[0]
    if not present:
        shape.add(node, context, f"no operation; add exactly one of {', '.join(names)}")
    else:
        shape.add(node.key_line_col(present[1]), context,
                  f"{len(present)} operations ({', '.join(present)}); keep exactly one, or list them in order "
                  "under `steps:`")
    return None


def _operation(
    node: Node, spec: OperatorSpec, shape: ShapeChecker, context: str, path: Path
) -> dict[str, str | None] | None:
    """The ``Mutation`` fields of operator ``spec`` as written at ``node``, as its registry entry says to read them."""
    if spec.anchoring == "diff":
        return _patch(node, shape, context, path)
    if not spec.fields:  # one string: the anchor (``delete: "text"``)
        anchor = shape.string(node, context, spec.name)
        return None if anchor is None else {"anchor": anchor}
    return _fields(node, spec, shape, context)


def _fields(node: Node, spec: OperatorSpec, shape: ShapeChecker, context: str) -> dict[str, str | None] | None:
    """An operation written as a mapping (``replace: {old: ..., new: ...}``): each key fills its ``Mutation`` field."""
    op, required = spec.name, spec.required_keys
    if not shape.keys(node, f"{context} {op}", spec.keys, required=required) or any(k not in node.value for k in required):
        return None
    values: dict[str, str | None] = {}
    for key, slot in spec.fields:
        if key in node.value:
            values[slot] = shape.string(node.value[key], context, f"{op}.{key}", QUALNAME if slot == "name" else None)
    if spec.refuse_unchanged and values.get("anchor") is not None and values.get("anchor") == values.get("text"):
        key_of = {slot: key for key, slot in spec.fields}
        shape.add(node, context, f"{op}.{key_of['anchor']} and {op}.{key_of['text']} are equal, so the mutation "
                                 "changes nothing")
        return None
    return None if None in values.values() else values


def _patch(node: Node, shape: ShapeChecker, context: str, path: Path) -> dict[str, str | None] | None:
    """``patch``'s value: the diff inline, or a ``.diff``/``.patch`` file next to the catalog; it must parse."""
    value = shape.string(node, context, "patch")
    if value is None:
        return None
    patch_file: str | None = None
    if "\n" not in value.strip() and value.strip().endswith((".diff", ".patch")):
        patch_file = value.strip()
        value = _read_patch_file(node, shape, context, path.parent, patch_file)
        if value is None:
            return None
    try:
        parse_patch(value)
    except PatchFormatError as exc:
        shape.add(node, context, f"patch {patch_file or '(inline)'} is not a unified diff: {exc}")
        return None
    return {"patch": value, "patch_file": patch_file}


def _read_patch_file(node: Node, shape: ShapeChecker, context: str, folder: Path, name: str) -> str | None:
    file = (folder / name).resolve()
    if not file.is_relative_to(folder.resolve()):
        shape.add(node, context, f"patch file {name!r} is outside the catalog folder; put it next to the catalog")
        return None
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        shape.add(node, context, f"patch file {name!r} not found next to the catalog ({folder}); create it "
                                 "or write the diff inline")
    except (OSError, UnicodeDecodeError) as exc:
        shape.add(node, context, f"patch file {name!r} cannot be read as UTF-8 text: {exc}")
    return None


def _occurrence(node: Node, op: str | None, shape: ShapeChecker, context: str) -> int | None:
    if "occurrence" not in node.value:
        return None
    if op is not None and not operators.operator(op).occurrence:
        shape.add(node.key_line_col("occurrence"), context, f"'occurrence' has no meaning for {op}; remove it")
        return None
    return shape.integer(node.value["occurrence"], context, "occurrence", minimum=1)


def _check_patch_path(mutation: Mutation, shape: ShapeChecker, node: Node) -> Mutation | None:
    if mutation.patch is None:
        return mutation
    path = parse_patch(mutation.patch).path
    if path not in (None, "/dev/null", mutation.target):
        shape.add(node, f"mutation {mutation.id!r}", f"the patch changes {path!r} but the target is "
                                                      f"{mutation.target!r}; make them the same file")
        return None
    return mutation


def _duplicate_ids(mutations: list[Mutation]) -> list[str]:
    seen: dict[str, Mutation] = {}
    problems: list[str] = []
    for m in mutations:
        if m.id in seen:
            problems.append(f"{m.location}: mutation {m.id!r}: id already used at {seen[m.id].location}; "
                            "ids are unique across the catalog, rename one")
        else:
            seen[m.id] = m
    return problems
