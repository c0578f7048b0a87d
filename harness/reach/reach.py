"""Reach: which test cases can see a change, from the lines each case executed in the baseline.

The baseline run records, per case, the project lines it executed (``harness/rows/pytest_reach.py``).
A source change is reduced to REGIONS of the original file (``change_regions``):

- a changed line inside a function body: that function's body (the innermost ``def`` whose body
  holds the line). A case reaches it when it executed any line of that body, itself or through a
  fixture of wider scope that it uses;
- an import, or a ``def`` line (signature, decorators): the whole file. Their effect reaches a case
  only through code of the file the case runs;
- a plain class attribute (``name = value`` directly in a plain class body, the value computed by no
  call): the statements that name it, in any file (``Attribute``; ``harness/reach/name_reach.py``);
- anything else outside a function body (a module-level assignment, a class header, an attribute
  of a dataclass, enum or decorated class): unknown, every case runs.

Cases whose reach is unknown always run: cases that started a child process (the child is not
measured) or ran a function that was on the stack when some case did (its result may be cached),
cases with no recorded reach, and every case when a changed body line also ran at
import or collection time (no case context). What an inferred case assumes is in docs/runner.md:
the suite is deterministic and its cases share no state, so a case that executed none of the
changed lines would produce the same outcome as in the baseline.
"""

from __future__ import annotations

import ast
import difflib
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from harness.reach.bodies import function_bodies, innermost
from harness.reach.name_reach import name_spans


@dataclass(frozen=True)
class Attribute:
    """A changed plain class attribute, seen by whatever reads it by name (``harness/reach/name_reach.py``)."""

    name: str


#: A region of one file: ``(first, last)`` line numbers, inclusive; ``None`` stands for the whole file;
#: an ``Attribute`` for the statements of any file that name a changed class attribute.
Region = tuple[int, int] | Attribute | None

#: Bases whose classes read their class-level names generically (fields, members): never an ``Attribute``.
GENERIC_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "NamedTuple", "TypedDict"})


@dataclass(frozen=True)
class Reach:
    """What a measured baseline run recorded."""

    #: file (relative to the tree) -> context (node id, ``fixture:NAME`` or ``""``) -> lines executed.
    files: Mapping[str, Mapping[str, frozenset[int]]]
    #: node id -> the fixtures it used (a ``fixture:NAME`` context counts for those cases).
    fixtures: Mapping[str, tuple[str, ...]]
    #: Contexts whose children were not all measured (not Python, a fork, a clean environment).
    spawned: frozenset[str]
    #: Every case the measured run executed.
    cases: frozenset[str]
    #: Function bodies on the stack when a context started a child, with that context: a case
    #: running one of them may read that child's result from a cache, so it inherits its reach.
    spawn_regions: tuple[tuple[str, int, int, str], ...] = ()
    #: context -> file -> lines its (measured) Python children executed.
    children: Mapping[str, Mapping[str, frozenset[int]]] = field(default_factory=dict)
    #: Contexts that started any child process (``None``: not recorded, by an older seamgate).
    starters: frozenset[str] | None = None
    #: context -> the project files that are not Python it opened, and the folders it listed (``rel/``;
    #: ``""``: the project's top folder); ``None``: not recorded (an older seamgate): any such file may be read.
    opened: Mapping[str, frozenset[str]] | None = None
    #: Function bodies on the stack when a context opened one of those files, with that context: a case
    #: running one of them may read the file's content from a cache, so it reads the file too.
    open_regions: tuple[tuple[str, int, int, str], ...] = ()

    @classmethod
    def read(cls, path: Path) -> Reach | None:
        """The recorded reach, or ``None`` when the run wrote none (it died, or coverage failed)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return cls.from_data(data)

    @classmethod
    def from_data(cls, data: Mapping) -> Reach:
        """The reach of a recorded JSON document, already parsed."""
        files = {f: {c: frozenset(lines) for c, lines in ctx.items()} for f, ctx in data.get("files", {}).items()}
        children = {c: {f: frozenset(lines) for f, lines in by_file.items()}
                    for c, by_file in data.get("children", {}).items()}
        return cls(files=files, fixtures={k: tuple(v) for k, v in data.get("fixtures", {}).items()},
                   spawned=frozenset(data.get("spawned", ())), cases=frozenset(data.get("cases", ())),
                   spawn_regions=tuple((f, int(a), int(b), str(c)) for f, a, b, c in data.get("spawn_regions", ())),
                   children=children,
                   starters=frozenset(c for c, n in data["spawn_counts"].items() if sum(n[:2]))
                   if "spawn_counts" in data else None,
                   opened={c: frozenset(paths) for c, paths in data["opened"].items()} if "opened" in data else None,
                   open_regions=tuple((f, int(a), int(b), str(c)) for f, a, b, c in data.get("open_regions", ())))

    def unknown(self) -> frozenset[str]:
        """Cases whose reach is unknown: an unmeasured child, or a cached result of one (``spawn_regions``)."""
        return self._with_fixture_users(set(self.spawned) | self._inheritors(self.spawned))

    def child_starters(self) -> frozenset[str] | None:
        """The cases that started a child process (themselves or through a fixture); ``None``: unknown."""
        return None if self.starters is None else self._with_fixture_users(set(self.starters))

    def readers(self, files: Iterable[str]) -> frozenset[str] | None:
        """The cases that may have read one of ``files`` (project files that are not Python, changed since):
        those that opened it or listed its folder, themselves or through a fixture, or ran a function that
        was on the stack when some context opened it (a cached content), and every case that started a
        child (its children's reads are not recorded). ``None``: every case (a read at import or collection
        time, or no record of reads)."""
        if self.opened is None or self.starters is None:
            return None
        files = set(files)
        folders = {_folder(rel) for rel in files}
        hit = {context for context, read in self.opened.items() if read & files or read & folders}
        if "" in hit:
            return None
        hit |= self._inheritors(hit, self.open_regions)
        return self._with_fixture_users(hit | set(self.starters))

    def reads(self, contexts: Iterable[str], names: Iterable[str]) -> set[str] | None:
        """Of the project files ``names`` that are not Python, those ``contexts`` may have read (``readers``'
        rule turned round: opened, in a folder listed, opened in a function they ran, or at import);
        ``None``: any of them (a context started a child, or no record of reads)."""
        contexts = set(contexts)
        if self.opened is None or self.starters is None or contexts & self.starters:
            return None
        read = set().union(*(self.opened.get(c, ()) for c in contexts | self._cached_openers(contexts) | {""}))
        return {rel for rel in names if rel in read or _folder(rel) in read}

    def _cached_openers(self, contexts: set[str]) -> set[str]:
        """Contexts that opened a file inside a function one of ``contexts`` ran (which may hold its content)."""
        found: set[str] = set()
        for file, first, last, opener in self.open_regions:
            ran = self.files.get(file, {})
            if any(first <= line <= last for context in contexts & set(ran) for line in ran[context]):
                found.add(opener)
        return found

    def _inheritors(self, spawners: Iterable[str], regions: Iterable[tuple[str, int, int, str]] | None = None) -> set[str]:
        """Contexts that ran a function that was on the stack when one of ``spawners`` started a child (with
        ``regions`` the ``open_regions``: opened a file)."""
        spawners = set(spawners)
        found: set[str] = set()
        for file, first, last, spawner in (self.spawn_regions if regions is None else regions):
            if spawner in spawners:
                for context, lines in self.files.get(file, {}).items():
                    if context and any(first <= line <= last for line in lines):
                        found.add(context)
        return found

    def _with_fixture_users(self, contexts: set[str]) -> frozenset[str]:
        """Node ids among ``contexts``, plus the cases using a ``fixture:NAME`` context among them."""
        fixtures = {c.removeprefix("fixture:") for c in contexts if c.startswith("fixture:")}
        cases = {c for c in contexts if c and not c.startswith("fixture:")}
        cases |= {case for case, used in self.fixtures.items() if fixtures & set(used)}
        return frozenset(cases)

    def reaching(self, file: str, regions: Iterable[Region]) -> frozenset[str] | None:
        """The cases that executed a line of ``regions`` of ``file``; ``None``: unknown (run every case)."""
        hit: set[str] = set()
        for region in regions:
            for context, lines in self.files.get(file, {}).items():
                if _meets(region, lines):
                    if context == "" and region is not None:
                        return None  # the changed body also ran at import or collection time
                    hit.add(context)
            hit |= {context for context, by_file in self.children.items() if _meets(region, by_file.get(file, ()))}
        hit |= self._inheritors(hit)
        return self._with_fixture_users(hit) | self.unknown()


def _folder(rel: str) -> str:
    """How a listing of ``rel``'s folder is recorded: ``"dir/"``, ``""`` for the project's top folder."""
    return rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""


def _meets(region: Region, lines: Iterable[int]) -> bool:
    lines = tuple(lines)
    if region is None:
        return bool(lines)
    return any(region[0] <= line <= region[1] for line in lines)


def cases_to_run(changes: Mapping[str, tuple[str, str]] | None, reach: Reach | None,
                 ids: Iterable[str], project: Path | None = None) -> frozenset[str] | None:
    """Of the baseline cases ``ids``, those a change can reach; ``None``: every case must run.

    ``changes`` maps each changed file to its (original, changed) text (``None``: not known, e.g. a
    git ref). A case the measured run never saw (``reach.cases``) always runs. ``project`` is the
    tree the measured run ran in (its line numbers are the reach's): a changed class attribute is
    looked up there (``harness/reach/name_reach.py``); without it, its reach is unknown.
    """
    if changes is None or reach is None:
        return None
    return cases_reached({rel: change_regions(original, changed) for rel, (original, changed) in changes.items()},
                         reach, ids, project)


def cases_reached(regions: Mapping[str, list[Region] | None], reach: Reach, ids: Iterable[str],
                  project: Path | None = None) -> frozenset[str] | None:
    """``cases_to_run`` for changes already reduced to their regions (``change_regions``: ``None``, reach
    unknown), by file: the sweep has them, and reading a change costs two parses."""
    hit: set[str] = set()
    for rel, found in regions.items():
        cases = _reaching(reach, rel, found, project) if found is not None else None
        if cases is None:
            return None
        hit |= cases
    ids = set(ids)
    return frozenset((hit | (ids - reach.cases)) & ids)


def _reaching(reach: Reach, rel: str, regions: list[Region], project: Path | None) -> frozenset[str] | None:
    """The cases ``regions`` of ``rel`` reach: line regions through ``Reach.reaching``, an attribute
    through every statement of ``project`` that names it."""
    lines = [r for r in regions if not isinstance(r, Attribute)]
    hit: set[str] = set()
    if lines:
        cases = reach.reaching(rel, lines)
        if cases is None:
            return None
        hit |= cases
    for region in regions:
        if isinstance(region, Attribute):
            spans = name_spans(str(project), region.name) if project is not None else None
            if spans is None:
                return None
            for file, found in spans.items():
                cases = reach.reaching(file, found)
                if cases is None:
                    return None
                hit |= cases
            hit |= reach.unknown()
    return frozenset(hit)


def change_regions(original: str, mutated: str) -> list[Region] | None:
    """The regions of ``original`` that the edit to ``mutated`` touches; ``None``: reach unknown.

    Both sides are read: the original lines replaced, deleted or next to an insertion name the
    regions; the lines the edit WROTE must be inside a function body too, or an import or a def
    line (an inserted module-level assignment, say, has unknown reach).
    """
    try:
        # the original is the same for every mutant of a file: parsed and walked once (``_parsed``)
        old_tree, new_tree = _parsed(original), _Parsed.of(mutated)
    except SyntaxError:
        return None
    old_lines, new_lines = _changed_lines(original, mutated)
    regions: list[Region] = []
    for line in old_lines:
        region = old_tree.classify(line)
        if region is False:
            return None
        regions.append(region)
    for line in new_lines:
        region = new_tree.classify(line)
        if region is False:
            return None
        if isinstance(region, Attribute):
            regions.append(region)  # the value the edit wrote (or a new attribute's name)
    return list(dict.fromkeys(regions))


@dataclass(frozen=True)
class _Parsed:
    """A parsed module and what classifying its lines reads: its function bodies and the statements outside them."""

    tree: ast.AST
    bodies: list[tuple[int, int]]
    statements: list[ast.stmt]

    @classmethod
    def of(cls, text: str) -> _Parsed:
        """``text`` parsed; ``SyntaxError`` when it does not parse."""
        tree = ast.parse(text)
        bodies = function_bodies(tree)
        return cls(tree, bodies, _top_statements(tree, bodies))

    def classify(self, line: int) -> Region | bool:
        """The region of ``line``: a function body, ``None`` (the whole file), or ``False`` (unknown)."""
        body = innermost(self.bodies, line)
        if body is not None:
            return body
        node = _statement_at(self.statements, line)
        if node is None or isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef)):
            return None  # an import, a def line, blank or comment: whole-file reach
        return _class_attribute(self.tree, node) or False


@functools.lru_cache(maxsize=8)
def _parsed(text: str) -> _Parsed:
    """``_Parsed.of``, kept for the few texts read over and over (the original of a swept file). Nothing
    reads a kept tree to change it."""
    return _Parsed.of(text)


def _class_attribute(tree: ast.AST, node: ast.stmt) -> Attribute | None:
    """``node`` as a plain class attribute: ``name = value`` (or ``name: T = value``) directly in the
    body of an undecorated class with no metaclass and no generic base, the value computed by no call
    (it runs at import), the name no dunder (the interpreter reads those itself)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        target, value = node.target, node.value
    else:
        return None
    if not isinstance(target, ast.Name) or target.id.startswith("__"):
        return None
    if any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)) for n in ast.walk(value)):
        return None
    owner = next((c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and node in c.body), None)
    if owner is None or owner.decorator_list or owner.keywords:
        return None
    bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in owner.bases}
    if bases & GENERIC_BASES or "" in bases:
        return None
    return Attribute(target.id)


def _changed_lines(original: str, mutated: str) -> tuple[list[int], list[int]]:
    """1-based lines of ``original`` replaced or deleted (both neighbours of an insertion), and the
    1-based lines of ``mutated`` the edit wrote."""
    a, b = original.splitlines(), mutated.splitlines()
    old: list[int] = []
    new: list[int] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2:  # pure insertion before original line i1 + 1
            old += [n for n in (i1, i1 + 1) if 1 <= n <= len(a)]
        else:
            old += range(i1 + 1, i2 + 1)
        new += range(j1 + 1, j2 + 1)
    return old, new


def _top_statements(tree: ast.AST, bodies: list[tuple[int, int]]) -> list[ast.stmt]:
    """Statements outside every function body (module and class level), innermost first."""
    found = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and innermost(bodies, n.lineno) is None]
    return sorted(found, key=lambda n: (n.end_lineno or n.lineno) - n.lineno)


def _statement_at(statements: list[ast.stmt], line: int) -> ast.stmt | None:
    """The innermost statement outside function bodies whose lines (decorators included) hold ``line``."""
    for node in statements:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        if first <= line <= (node.end_lineno or node.lineno):
            if isinstance(node, ast.ClassDef) and not _in_header(node, line):
                continue  # inside the class body but on no statement: blank or comment
            return node
    return None


def _in_header(node: ast.ClassDef, line: int) -> bool:
    return line < (node.body[0].lineno if node.body else node.lineno + 1)
