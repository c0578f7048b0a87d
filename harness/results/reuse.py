"""Reuse: a row of the kill matrix kept by the newest run is taken again when nothing it read changed.

Each filled row is kept in ``rows.json`` with a DIGEST of what it depends on: its label and
selection, the mode (``--prove`` or not), the mutated file's text, and the content of every file
its cases read. For a mutation's row those files are the ones its cases reached in the baseline
(their own lines, their fixtures', their measured children's), each case's own test file, every
``conftest.py`` and ``pyproject.toml``, the content of every non-Python file under a selected folder
(a test's data: what reads it is not measured), and the list of files under each selected folder (a
new test file changes it). A row holding a case whose reach is unknown, and every baseline row, depend
on every file of the project. ``--no-reuse`` turns this off; ``--prove`` never reuses a default run.

So a second ``seamgate run`` with nothing changed reuses every row; after a one-line change in
``drivers/dense.py``, the baseline and the rows whose cases reach that file run again, and the
others are taken as they were (PIT's and Stryker's incremental re-test, at row granularity).

A row is looked up in EVERY kept run folder, newest first (``KeptRuns``), not only in ``latest``: a
partial run in between (``--gate X``, ``--arm cuda``, a subset of gate files) holds only its own
rows, and a smaller baseline selection under the same row label. The whole row is taken from the
newest kept run whose row of that label has the same digest (a digest names everything the row
read, so an older match is as good as a newer one); cells are carried (``harness/reach/incremental.py``)
from the newest kept run whose row has the same selection (and catalog entry), measured against
THAT run's snapshot and recorded reach.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from harness.project_copy import project_files
from harness.reach.incremental import Snapshot
from harness.reach.reach import Reach
from harness.results.workspace import LATEST, runs_root
from reports.atomic import write_atomic
from reports.outcome import CaseOutcome, RunOutcome

ROWS_FILE = "rows.json"


def file_hashes(project: Path) -> dict[str, str]:
    """sha256 of every project file (git's tracked and untracked-not-ignored files), by relative path."""
    out = {}
    for rel in project_files(project):
        path = project / rel
        if path.is_file() and not rel.startswith(".seamgate/"):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def files_read(reach: Reach | None, case_ids: Iterable[str], hashes: Mapping[str, str],
               select: Iterable[str]) -> set[str] | None:
    """The project files the cases ``case_ids`` depend on; ``None``: every file (reach unknown)."""
    ids = set(case_ids)
    if reach is None or ids & reach.unknown() or ids - reach.cases:
        return None
    used_fixtures = {f"fixture:{name}" for case in ids for name in reach.fixtures.get(case, ())}
    contexts = ids | used_fixtures
    files = {rel for rel, by_context in reach.files.items() if contexts & set(by_context)}
    files |= {rel for context in contexts for rel in reach.children.get(context, {})}
    files |= {case.split("::", 1)[0] for case in ids}
    files |= {rel for rel in hashes if rel.endswith("conftest.py") or rel == "pyproject.toml"}
    # A test's data (any non-Python file inside a selected folder): its content counts (the list of names
    # alone let an edited data file's row be reused, issue 28); elsewhere in the tree, a file the cases opened
    # or one in a folder they listed (``Reach.reads``: every such file when a case started a child).
    others = [rel for rel in hashes if not rel.endswith(".py")]
    files |= {rel for rel in others if any(_under(rel, entry) for entry in select)}
    read = reach.reads(contexts, others)
    files |= set(others) if read is None else read
    return files


def _under(rel: str, entry: str) -> bool:
    """Whether the selection entry ``entry`` (a folder, a file or a node id) covers the file ``rel``:
    a prefix is not a folder (``tests/seam`` does not cover ``tests/seam_extra/x.py``)."""
    entry = entry.split("::", 1)[0].rstrip("/")
    return rel == entry or rel.startswith(entry + "/")


def digest(label: str, select: Iterable[str], prove: bool, extra: str, files: set[str] | None,
           hashes: Mapping[str, str]) -> str:
    """What a row depends on, as one sha256."""
    h = hashlib.sha256()
    select = tuple(select)
    h.update(json.dumps([label, select, prove, extra]).encode())
    under = sorted(rel for rel in hashes if any(_under(rel, entry) for entry in select))
    h.update(json.dumps(under).encode())
    for rel in sorted(hashes if files is None else files):
        h.update(f"{rel}\0{hashes.get(rel, 'missing')}\0".encode())
    return h.hexdigest()


def run_to_data(run: RunOutcome) -> dict[str, Any]:
    data = asdict(run)
    data["cases"] = [asdict(c) for c in run.cases]
    return data


def run_from_data(data: Mapping[str, Any]) -> RunOutcome:
    cases = tuple(CaseOutcome(**c) for c in data.get("cases", ()))
    return RunOutcome(**{**data, "cases": cases})


def load_kept_rows(kept: Path | None) -> dict[str, dict[str, Any]]:
    """label -> {"digest", "run", "flaky"?} from a kept run folder (empty when none or unreadable)."""
    if kept is None:
        return {}
    try:
        return json.loads((kept / ROWS_FILE).read_text(encoding="utf-8"))["rows"]
    except (OSError, ValueError, KeyError):
        return {}


def write_kept_rows(kept: Path, rows: Mapping[str, Mapping[str, Any]], files: Mapping[str, str] | None = None) -> None:
    """Keep the rows, and the project's file hashes they were made on (``harness/reach/incremental.py``)."""
    write_atomic(kept / ROWS_FILE, json.dumps({"schema": 1, "rows": rows, "files": dict(files or {})}) + "\n")


class KeptRun:
    """One kept run folder: its rows, and (read when first asked) its snapshot and recorded reach."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._rows: dict[str, dict[str, Any]] | None = None
        self._snapshot: Snapshot | None = None
        self._reach: dict[str, dict[str, Any] | None] = {}
        self._lock = threading.Lock()  # rows are looked up from the runner's worker threads

    @property
    def rows(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            if self._rows is None:
                self._rows = load_kept_rows(self.folder)
            return self._rows

    @property
    def snapshot(self) -> Snapshot:
        """The project as this run saw it (the file hashes and measured sources it kept)."""
        with self._lock:
            if self._snapshot is None:
                self._snapshot = Snapshot.read(self.folder)
            return self._snapshot

    def reach(self, name: str) -> dict[str, Any] | None:
        """The recorded reach this run kept in file ``name`` (``None``: none, or unreadable); read once
        (every mutation row carried from this run asks for its baseline's; callers never change it)."""
        with self._lock:
            if name not in self._reach:
                try:
                    self._reach[name] = json.loads((self.folder / name).read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    self._reach[name] = None
            return self._reach[name]


@dataclass(frozen=True)
class KeptRow:
    """A row as a kept run holds it (``data``: digest, run, flaky, select, entry) and that run."""

    data: Mapping[str, Any]
    run: KeptRun

    @property
    def folder(self) -> Path:
        return self.run.folder


class KeptRuns:
    """Every kept run folder of a project, newest first; each row is looked up in the newest that holds it."""

    def __init__(self, runs: Sequence[KeptRun] = ()) -> None:
        self.runs = tuple(runs)

    @classmethod
    def read(cls, project: Path) -> KeptRuns:
        """The kept runs under ``.seamgate/runs``: ``latest`` first, then the others by when their rows were
        written, newest first (folder names sort by second and pid, not by order)."""
        root = runs_root(project)
        newest = (root / LATEST).resolve() if (root / LATEST).exists() else None
        try:
            folders = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and (p / ROWS_FILE).is_file()]
        except OSError:
            folders = []

        def age(folder: Path) -> tuple[bool, int, str]:
            try:
                written = (folder / ROWS_FILE).stat().st_mtime_ns
            except OSError:
                written = 0
            return folder.resolve() == newest, written, folder.name

        return cls([KeptRun(folder) for folder in sorted(folders, key=age, reverse=True)])

    def newest(self, label: str, accept: Callable[[Mapping[str, Any]], bool] = lambda row: True,
               having: str | None = None) -> KeptRow | None:
        """The row ``label`` of the newest kept run that holds one ``accept`` takes (and, given ``having``,
        keeps that file: a ``--prove`` run, ``seamgate mutations reds`` among them, records no reach)."""
        for run in self.runs:
            row = run.rows.get(label)
            if isinstance(row, Mapping) and "run" in row and accept(row) \
                    and (having is None or (run.folder / having).is_file()):
                return KeptRow(row, run)
        return None

    def matching(self, label: str, row_digest: str) -> KeptRow | None:
        """The row ``label`` of the newest kept run whose row has digest ``row_digest`` (nothing it read changed)."""
        return self.newest(label, lambda row: row.get("digest") == row_digest)
