"""The sweep cache: a mutant's outcome is taken again when neither its code nor its reaching tests changed.

Kept in ``.seamgate/sweep-cache/`` (``--fresh`` removes it): ``cache.json`` maps a DIGEST to a
mutant's outcome, and holds the last baseline (its outcome and reach) under the digest of every
project file, so a sweep with nothing changed runs no pytest at all.

A mutant's digest covers: its id, its diff and the source of its function (mutmut renumbers a
function's mutants when the function changes), the selection and the mode; and what its reaching
cases read in the baseline (``harness/reuse.files_read``): every such file's content, except the
mutated file itself, of which only the lines those cases (and the import of the file) executed
count. So a one-line change in another function of the same file re-tests only the mutants whose
cases run that line, the way mutmut re-tests by function; a change in a test file re-tests the
mutants its cases reach. A mutant whose cases include one of unknown reach depends on every file.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, Iterable, Mapping

from seam.arms import DEFAULT_ARM
from harness.reach.reach import Reach
from harness.results.reuse import files_read
from reports.atomic import write_atomic

CACHE_DIR = Path(".seamgate") / "sweep-cache"
SCHEMA = 1


def cache_dir(project: Path) -> Path:
    return project / CACHE_DIR


def drop(project: Path) -> None:
    """``--fresh``: forget every kept outcome and baseline."""
    shutil.rmtree(cache_dir(project), ignore_errors=True)


def load(project: Path) -> dict[str, Any]:
    try:
        data = json.loads((cache_dir(project) / "cache.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"schema": SCHEMA, "mutants": {}, "baseline": None}
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        return {"schema": SCHEMA, "mutants": {}, "baseline": None}
    data.setdefault("mutants", {})
    return data


def save(project: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` merged into what is on disk: two sweeps of one project (each loaded the cache
    at its start) keep each other's outcomes; digests name content, so a merge is never stale."""
    import fcntl

    folder = cache_dir(project)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "cache.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        on_disk = load(project)
        merged = {**on_disk, **data, "mutants": {**on_disk.get("mutants", {}), **data.get("mutants", {})}}
        write_atomic(folder / "cache.json", json.dumps(merged) + "\n")


def mutant_digest(*, mutant_id: str, diff: str, function_source: str, select: Iterable[str], prove: bool,
                  cases: Iterable[str] | None, reach: Reach | None, hashes: Mapping[str, str], mutated_file: str,
                  source_text: str, arm: str = DEFAULT_ARM) -> str:
    """What one mutant's outcome depends on, as one sha256 (see the module docstring)."""
    select = tuple(select)
    h = hashlib.sha256()
    h.update(json.dumps([mutant_id, _body(diff), function_source, select, prove]).encode())
    if arm != DEFAULT_ARM:  # the default arm keeps the digests recorded before arms were chosen
        h.update(f"arm\0{arm}".encode())
    ids = sorted(cases) if cases is not None else None
    h.update(json.dumps(ids).encode())
    files = None if ids is None else files_read(reach, ids, hashes, select)
    if files is None:
        for rel in sorted(hashes):
            h.update(f"{rel}\0{hashes[rel]}\0".encode())
        return h.hexdigest()
    for rel in sorted(files):
        if rel == mutated_file and reach is not None:
            h.update(f"{rel}\0{_executed_text(reach, rel, ids, source_text)}\0".encode())
        else:
            h.update(f"{rel}\0{hashes.get(rel, 'missing')}\0".encode())
    return h.hexdigest()


def _body(diff: str) -> str:
    """A diff without its ``@@`` line numbers (an edit above the function moves them, nothing else)."""
    return "\n".join(line for line in diff.splitlines() if not line.startswith("@@"))


def _executed_text(reach: Reach, rel: str, cases: Iterable[str], text: str) -> str:
    """The text of the lines of ``rel`` that ``cases`` (their fixtures, their children) and its import executed."""
    contexts = set(cases) | {""}
    contexts |= {f"fixture:{name}" for case in cases for name in reach.fixtures.get(case, ())}
    lines: set[int] = set()
    for context, executed in reach.files.get(rel, {}).items():
        if context in contexts:
            lines |= executed
    for context in contexts:
        lines |= reach.children.get(context, {}).get(rel, frozenset())
    source = text.splitlines()
    return "\n".join(source[n - 1] if 0 < n <= len(source) else "" for n in sorted(lines))
