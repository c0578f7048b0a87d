"""Cell-level reuse across runs: what changed since the kept run, which cases it reaches, the merged reach.

A kept run (``.seamgate/runs/<stamp>``) holds its rows' cells, the baseline's recorded reach, a
sha256 of every project file (``rows.json``'s ``files``) and the text of every Python file the
reach names (``sources.json``). A row's cells come from the newest kept run whose row has the same
selection (``harness/reuse.KeptRuns``), and a later run diffs the project against THAT run's snapshot and asks
the SAME question a mutation's row asks of its change (``harness/reach.cases_to_run``): which cases
executed a changed region? Those cases run again, in the baseline and in every row that runs them;
every other cell is taken from the kept run, as PIT and Stryker re-test incrementally.

What a reused cell assumes is what an inferred cell assumes (docs/runner.md): the suite is
deterministic, its cases share no state, and a case's inputs are the project's Python files it
executes and the other project files it opens. So these changes re-run EVERY case: a
``conftest.py``, ``pyproject.toml``, ``setup.cfg``, ``pytest.ini`` or ``tox.ini``; any other
non-Python file inside a selected folder (a test's data); a change outside function bodies that is
not an import or a ``def`` line (a module constant); a changed body that also ran at import time; a
non-Python file elsewhere in the tree that was opened at import or collection time, or any such file
when the kept reach has no record of opened files (an older seamgate). A non-Python file elsewhere
(``evidence/x.json``, ``docs/x.md``) re-runs the cases that opened it or listed its folder
(``Reach.readers``: and those that started a child, whose reads are not recorded). A new file changes
nothing by itself (a new test file's cases are new, so they run) unless a case listed its folder.

After a partial baseline run, the reach of the cases taken from the kept run is carried into the
new reach file with its line numbers moved past the edits (``merge_reach``).
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from harness.reach.reach import Reach, cases_to_run
from reports.atomic import write_atomic

SOURCES_FILE = "sources.json"
#: Files that configure how every case runs: a change re-runs every case.
_CONFIG_NAMES = ("conftest.py", "pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini")


@dataclass(frozen=True)
class Snapshot:
    """The project as the kept run saw it: file hashes, and the text of the measured Python files."""

    hashes: Mapping[str, str] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, folder: Path | None) -> Snapshot:
        """The snapshot kept in ``folder`` (empty when there is none: nothing can be reused by cell)."""
        if folder is None:
            return cls()
        try:
            hashes = json.loads((folder / "rows.json").read_text(encoding="utf-8")).get("files", {})
            sources = json.loads((folder / SOURCES_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError, AttributeError):
            return cls()
        return cls(hashes=dict(hashes), sources=dict(sources))


def write_sources(folder: Path, project: Path, reaches: Iterable[Reach | None]) -> None:
    """Keep the text of every Python file a recorded reach names (the next run diffs against it)."""
    names = sorted({rel for reach in reaches if reach is not None for rel in reach.files}
                   | {rel for reach in reaches if reach is not None for by_file in reach.children.values()
                      for rel in by_file})
    texts = {}
    for rel in names:
        try:
            texts[rel] = (project / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    write_atomic(folder / SOURCES_FILE, json.dumps(texts) + "\n")


def changed_files(old: Mapping[str, str], new: Mapping[str, str]) -> set[str]:
    """Files added, removed or edited between two ``{rel: sha256}`` maps."""
    return {rel for rel in set(old) | set(new) if old.get(rel) != new.get(rel)}


def cases_to_rerun(snapshot: Snapshot, hashes: Mapping[str, str], project: Path, reach: Reach | None,
                   ids: Iterable[str], select: Iterable[str]) -> frozenset[str] | None:
    """The cases of ``ids`` that the changes since ``snapshot`` can reach; ``None``: every case.

    ``hashes`` is the project now (``harness.results.reuse.file_hashes``); ``reach`` the kept baseline's.
    """
    if not snapshot.hashes or reach is None:
        return None
    select = tuple(entry.split("::", 1)[0].rstrip("/") for entry in select)
    changes: dict[str, tuple[str, str]] = {}
    data: list[str] = []
    for rel in sorted(changed_files(snapshot.hashes, hashes)):
        if rel.rsplit("/", 1)[-1] in _CONFIG_NAMES:
            return None
        if not rel.endswith(".py"):
            if any(rel == entry or rel.startswith(entry + "/") for entry in select):
                return None  # a test's data file: what reads it is not measured
            data.append(rel)  # elsewhere in the tree: the cases that opened it (``Reach.readers``)
            continue
        if rel not in snapshot.hashes:
            continue  # a new module: nothing executed it before (its importers changed too, or are new)
        old = snapshot.sources.get(rel)
        if old is None:
            if rel in reach.files or any(rel in by_file for by_file in reach.children.values()):
                return None  # measured but its text was not kept: cannot tell what changed
            continue  # never executed by any case: nothing it did can be reused wrongly
        new = _text(project / rel) if rel in hashes else ""
        changes[rel] = (old, new)
    rerun = cases_to_run(changes, reach, ids)
    readers = reach.readers(data) if data else frozenset()
    if rerun is None or readers is None:
        return None
    return rerun | (readers & set(ids))


def line_map(old: str, new: str) -> dict[int, int]:
    """1-based old line -> new line, for the lines the edit left as they were."""
    out: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal":
            out.update({i + 1: j1 + (i - i1) + 1 for i in range(i1, i2)})
    return out


def merge_reach(old: Mapping[str, Any], new: Mapping[str, Any], rerun: Iterable[str],
                moved: Mapping[str, Mapping[int, int]]) -> dict[str, Any]:
    """The reach of a baseline in which ``rerun`` cases ran again (``new``) and the rest were kept (``old``).

    ``moved`` maps each changed file's old lines to its new ones; an old line the edit rewrote is
    dropped (a kept case never executed it: otherwise it would have run again).
    """
    rerun = set(rerun) | set(new.get("cases", ()))

    def carry(rel: str, lines: Iterable[int]) -> list[int]:
        if rel not in moved:
            return list(lines)
        return [moved[rel][n] for n in lines if n in moved[rel]]

    files: dict[str, dict[str, list[int]]] = {}
    for rel, by_context in old.get("files", {}).items():
        for context, lines in by_context.items():
            if context in rerun or (rel in moved and not context):
                continue  # re-recorded, or import-time lines of a changed file (re-recorded at collection)
            kept = carry(rel, lines)
            if kept:
                files.setdefault(rel, {})[context] = kept
    for rel, by_context in new.get("files", {}).items():
        for context, lines in by_context.items():
            merged = set(files.get(rel, {}).get(context, ())) | set(lines)
            files.setdefault(rel, {})[context] = sorted(merged)
    children = {c: {rel: carry(rel, lines) for rel, lines in by_file.items()}
                for c, by_file in old.get("children", {}).items() if c not in rerun}
    children.update(new.get("children", {}))
    regions = [r for r in old.get("spawn_regions", ()) if r[3] not in rerun and r[0] not in moved]
    regions += [list(r) for r in new.get("spawn_regions", ())]
    cases = [c for c in old.get("cases", ()) if c not in rerun] + list(new.get("cases", ()))
    reads: dict[str, Any] = {}
    if "opened" in old and "opened" in new:  # the files opened: the kept contexts' (import time is re-recorded)
        reads["opened"] = {**{c: p for c, p in old["opened"].items() if c and c not in rerun}, **new["opened"]}
        # a region keeps its ends where the edit left them (``carry``); an end the edit rewrote: the whole file
        # (never fewer readers)
        opens: list[list[Any]] = []
        for f, a, b, c in old.get("open_regions", ()):
            if c not in rerun:
                ends = carry(f, (a, b))
                opens.append([f, *ends, c] if len(ends) == 2 else [f, 1, 1 << 30, c])
        reads["open_regions"] = sorted(opens + [list(r) for r in new.get("open_regions", ())])
    return {
        **reads,
        "root": new.get("root", old.get("root")), "files": files,
        "fixtures": {**{c: f for c, f in old.get("fixtures", {}).items() if c not in rerun}, **new.get("fixtures", {})},
        "children": children,
        "spawned": sorted({c for c in old.get("spawned", ()) if c not in rerun} | set(new.get("spawned", ()))),
        "spawn_counts": {**{c: n for c, n in old.get("spawn_counts", {}).items() if c not in rerun},
                         **new.get("spawn_counts", {})},
        "spawn_regions": sorted(map(list, regions)), "cases": list(dict.fromkeys(cases)),
    }


def moved_lines(snapshot: Snapshot, project: Path, hashes: Mapping[str, str]) -> dict[str, dict[int, int]]:
    """``line_map`` of every changed Python file whose old text the snapshot kept."""
    out = {}
    for rel in changed_files(snapshot.hashes, hashes):
        if rel in snapshot.sources:
            out[rel] = line_map(snapshot.sources[rel], _text(project / rel) if rel in hashes else "")
    return out


def entry_digest(entry: Any) -> str:
    """A stable digest of a mutation's catalog entry (a row's cells are reused only under the same one)."""
    return hashlib.sha256(repr(entry).encode()).hexdigest()


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
