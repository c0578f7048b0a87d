"""What a sweep takes again: its baseline and each mutant's outcome, kept as ROWS of its run folder.

One store for the gate runner and the sweep (issue 25): each ``seamgate sweep`` keeps, in its run folder's
``rows.json`` (``write_kept_rows`` of ``harness/results/reuse.py``, beside its ``outcomes.json``), a row for
its baseline and one for each decided mutant, each under the DIGEST of what it depends on. The next sweep
looks each up in every kept run folder, newest first (``KeptRuns``: how a gate run finds its rows), and
takes the newest row whose digest is the same. A sweep running beside another keeps its own folder, so
neither loses the other's outcomes; an interrupted sweep has kept every batch that ended. ``--fresh``
takes nothing kept (and keeps what it decides). The folders are ``.seamgate/runs``'s (and a ``--output``
folder that an earlier sweep kept rows in), of which the newest 10 stay: a sweep keeps again, in its own
folder, every row it took, so the newest sweep's scope is whole.

The baseline's row is keyed as a gate run's baseline row: a ``RowKey`` of the working tree on the sweep's
arm under the sweep's environment, with the same digest rule (``reuse.digest`` over every project file)
and its reach in the same file (``reach_file_name``). Its label begins with ``sweep``: a gate run's
baseline ran twice and without its flaky cases, the sweep's once, so neither job takes the other's.

A mutant's digest covers: its id, its diff and the source of its function (mutmut renumbers a
function's mutants when the function changes), the selection and the mode; and what its reaching
cases read in the baseline (``harness/results/reuse.py`` ``files_read``): every such file's content, except
the mutated file itself, of which only the lines those cases (and the import of the file) executed
count. So a one-line change in another function of the same file re-tests only the mutants whose
cases run that line, the way mutmut re-tests by function; a change in a test file re-tests the
mutants its cases reach. A mutant whose cases include one of unknown reach depends on every file.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from seam.arms import DEFAULT_ARM
from harness.gates.model import SourceState
from harness.plan.matrix import RowKey
from harness.reach.reach import Reach
from harness.results.reuse import (ROWS_FILE, KeptRun, KeptRuns, digest, files_read, run_from_data, run_to_data,
                                   write_kept_rows)
from harness.results.workspace import reach_file_name
from reports.outcome import RunOutcome


def baseline_key(arm: str, env: Mapping[str, str]) -> RowKey:
    """The sweep's baseline as a row of the matrix: the working tree, on ``arm``, under ``env``."""
    return RowKey(SourceState(), arm, tuple(sorted(env.items())))


def baseline_label(key: RowKey) -> str:
    return f"sweep {key.label()}"


def mutant_label(mutant_id: str) -> str:
    return f"sweep mutant {mutant_id}"


class KeptOutcomes:
    """One sweep's use of the kept rows: what it takes again, and the rows it keeps in ``folder``."""

    def __init__(self, project: Path, folder: Path, hashes: Mapping[str, str], *, fresh: bool) -> None:
        self.folder, self.hashes = folder, dict(hashes)
        #: Every kept run folder, newest first (none with ``--fresh``); first, ``folder`` itself when an earlier
        #: sweep kept rows there (``--output DIR`` given again: DIR is not under ``.seamgate/runs``).
        own = [KeptRun(folder)] if (folder / ROWS_FILE).is_file() else []
        self.kept_runs = KeptRuns() if fresh else KeptRuns([*own, *KeptRuns.read(project).runs])
        #: The rows this sweep keeps: those it took again and those it decided, by label.
        self.rows: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()  # batches end on the pool's threads

    def baseline_digest(self, key: RowKey, select: Sequence[str]) -> str:
        """What the baseline depends on: every project file (its run does not depend on ``--prove``)."""
        return digest(baseline_label(key), select, False, "baseline", None, self.hashes)

    def baseline(self, key: RowKey, select: Sequence[str]) -> tuple[RunOutcome, Reach | None] | None:
        """The kept baseline of ``key`` over ``select`` when no project file changed since (with its reach,
        copied into this sweep's folder), else ``None``."""
        name, wanted = reach_file_name(key), self.baseline_digest(key, select)
        row = self.kept_runs.newest(baseline_label(key), lambda data: data.get("digest") == wanted, having=name)
        if row is None:
            return None
        if row.folder != self.folder:
            shutil.copyfile(row.folder / name, self.folder / name)
        self._keep(baseline_label(key), dict(row.data))
        return run_from_data(row.data["run"]), Reach.read(self.folder / name)

    def keep_baseline(self, key: RowKey, select: Sequence[str], run: RunOutcome) -> None:
        self._keep(baseline_label(key), {"digest": self.baseline_digest(key, select), "run": run_to_data(run),
                                         "select": list(select)})

    def mutant(self, mutant_id: str, mutant_digest: str) -> Mapping[str, Any] | None:
        """The kept outcome of the mutant with this digest (kept again in this sweep's rows), or ``None``."""
        row = self.kept_runs.matching(mutant_label(mutant_id), mutant_digest)
        if row is None:
            return None
        self._keep(mutant_label(mutant_id), dict(row.data))
        return row.data["run"]

    def keep_mutant(self, mutant_id: str, mutant_digest: str, outcome: Mapping[str, Any]) -> None:
        self._keep(mutant_label(mutant_id), {"digest": mutant_digest, "run": dict(outcome)})

    def _keep(self, label: str, row: dict[str, Any]) -> None:
        with self._lock:
            self.rows[label] = row

    def save(self) -> None:
        """Write the rows kept so far into the folder's ``rows.json`` (atomically; again as batches end)."""
        with self._lock:
            write_kept_rows(self.folder, self.rows, self.hashes)


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
