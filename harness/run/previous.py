"""What a run takes from previous runs: whole rows REUSED when nothing they read changed, single cells
CARRIED when no change since reaches their case (``docs/glossary.md``; ``docs/runner.md``, "Kept results").

The kept data and its digests are ``harness/results/reuse.py``'s and ``harness/reach/incremental.py``'s;
this class holds one run's use of them: which kept row each baseline carries from, the cases a change
since reaches, the rows this run keeps for the next, and the rows it reused. It shares the session's
``rows``, ``reach`` and ``flaky`` (a reused baseline fills them as a run would).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.plan.matrix import RowKey, exit_code_of
from harness.reach.incremental import cases_to_rerun, entry_digest, merge_reach, moved_lines
from harness.reach.reach import Reach
from harness.results.reuse import KeptRow, KeptRuns, digest, files_read, run_from_data, run_to_data
from harness.results.workspace import reach_file_name
from harness.run.hashing import RunHashes
from harness.run.row_result import RowResult
from harness.run.trees import Trees, text_of
from reports.outcome import RunOutcome, counted


class PreviousRuns:
    """One run's reuse of kept rows and carried cells (see the module docstring)."""

    def __init__(self, project: Path, options: Any, materializer: Any, hashing: RunHashes, copies: Trees, *,
                 rows: dict[RowKey, RowResult], reach: dict[RowKey, Reach | None],
                 flaky: dict[str, tuple[str, str]]) -> None:
        self.project, self.options, self.materializer = project, options, materializer
        self.hashing, self.copies = hashing, copies
        #: The session's filled rows, recorded reach and flaky baseline cases (shared, not copied).
        self.rows, self.reach, self.flaky = rows, reach, flaky
        #: This run's kept folder (set when the run starts).
        self.kept: Path | None = None
        self.guard = threading.Lock()
        #: Every kept run's rows, newest first (a row is looked up in the newest run holding it),
        #: this run's rows to keep, and the reused ones.
        self.kept_runs = KeptRuns()
        #: Per baseline row: the kept row its cells are carried from (its run's snapshot and reach),
        #: its selection, and the cases a change since that run reaches (``None``: every case) --
        #: ``harness/reach/incremental.py``.
        self.carried_from: dict[RowKey, KeptRow] = {}
        self.baseline_select: dict[RowKey, tuple[str, ...]] = {}
        self.rerun: dict[RowKey, frozenset[str] | None] = {}
        #: The kept run's recorded reach of each baseline row, as read (merged into this run's).
        self.kept_reach: dict[RowKey, dict[str, Any]] = {}
        self.kept_rows: dict[str, dict[str, Any]] = {}
        self.reused: set[RowKey] = set()

    def reuse_baseline(self, key: RowKey, select: tuple[str, ...]) -> bool:
        """Take the kept baseline row (and its reach) when no project file changed since."""
        self.baseline_select[key] = select
        if not self.options.reuse:
            return False
        row_digest = self.baseline_digest(key, select)
        kept = self.kept_runs.matching(key.label(), row_digest)
        old_reach = kept.folder / reach_file_name(key) if kept is not None else None
        if kept is None or (not self.options.prove and not old_reach.is_file()):
            return False
        self.carried_from[key] = kept
        self.rows[key] = RowResult.ran(self.carried(run_from_data(kept.data["run"])))
        self.flaky.update({n: tuple(v) for n, v in kept.data.get("flaky", {}).items()})
        if not self.options.prove:
            shutil.copyfile(old_reach, self.kept / reach_file_name(key))
            self.reach[key] = Reach.read(self.kept / reach_file_name(key))
        self.reused.add(key)
        self.rerun[key] = frozenset()  # nothing changed: every cell of every row may be carried
        self.remember(key, row_digest, self.rows[key].outcome, select)
        return True

    def carried_cells(self, key: RowKey, select: tuple[str, ...]) -> dict[str, Any]:
        """The kept baseline's cells (node id -> cell) that no change since the kept run reaches.

        Empty (run every case) without a kept row of the same selection and mode, with ``--prove``
        (which records no reach), or when a change's reach is unknown.
        """
        kept = self.kept_runs.newest(key.label(), lambda row: row.get("select") == list(select),
                                    having=reach_file_name(key)) if self.options.reuse else None
        if kept is not None and (data := kept.run.reach(reach_file_name(key))) is not None:
            self.kept_reach[key] = data
        old_reach = Reach.from_data(self.kept_reach[key]) if key in self.kept_reach else None
        if kept is None or self.options.prove or old_reach is None:
            self.rerun[key] = None
            return {}
        self.carried_from[key] = kept
        old = run_from_data(kept.data["run"])
        ids = [c.nodeid for c in old.cases]
        rerun = cases_to_rerun(kept.run.snapshot, self.hashing.hashes(), self.project, old_reach, ids, select)
        self.rerun[key] = rerun
        if rerun is None or old.end != "completed" or any(c.nodeid not in old_reach.cases for c in old.cases):
            return {}  # a collection error (no case of the reach) is re-run, never carried
        flaky = set(kept.data.get("flaky", {}))
        return {c.nodeid: replace(c, carried=True) for c in old.cases if c.nodeid not in rerun and c.nodeid not in flaky}

    def with_carried_cells(self, key: RowKey, run: RunOutcome, carried: Mapping[str, Any],
                           reach_file: Path | None) -> RunOutcome:
        """A partial baseline run plus the carried cells; its reach merged with the kept one."""
        if reach_file is not None:
            new = json.loads(reach_file.read_text(encoding="utf-8")) if reach_file.is_file() else {}
            merged = merge_reach(self.kept_reach[key], new, [c.nodeid for c in run.cases],
                                 moved_lines(self.carried_from[key].run.snapshot, self.project, self.hashing.hashes()))
            reach_file.write_text(json.dumps(merged), encoding="utf-8")
        cases = run.cases + tuple(carried.values())
        return replace(run, cases=cases, exit_code=exit_code_of(cases),
                       detail=(run.detail + "; " if run.detail else "") +
                              f"{counted(len(carried), 'cell')} carried from the previous run (no change since reaches them)")

    def carried(self, run: RunOutcome) -> RunOutcome:
        """A reused run with its log folder copied into this run's kept folder (its messages name files
        that outlive the old folder's pruning)."""
        old = Path(run.log).parent if run.log else None
        if old is None or not old.is_dir():
            return run
        new = self.kept / "runs" / f"reused-{old.name}"
        shutil.copytree(old, new, dirs_exist_ok=True)
        return replace(run, log=str(new / Path(run.log).name))

    def baseline_digest(self, key: RowKey, select: tuple[str, ...]) -> str:
        return digest(key.label(), select, self.options.prove, "baseline", None, self.hashing.hashes())

    def remember(self, key: RowKey, row_digest: str, run: RunOutcome, select: Sequence[str]) -> None:
        with self.guard:
            self.kept_rows[key.label()] = {"digest": row_digest, "run": run_to_data(run),
                                           "flaky": {n: list(v) for n, v in self.flaky.items()},
                                           "select": list(select),
                                           "entry": self.entry(key)}

    def entry(self, key: RowKey) -> str | None:
        """Digest of a mutation row's catalog entry (cells are carried only under the same entry)."""
        catalog = getattr(self.materializer, "catalog", None)
        if key.source.kind != "mutation" or catalog is None or key.source.mutation not in catalog:
            return None
        return entry_digest(catalog.get(key.source.mutation))

    def row_digest(self, key: RowKey, select: tuple[str, ...], tree: Path, baseline: RunOutcome) -> str:
        """What a mutation's row depends on (``harness/results/reuse.py``)."""
        files = self.copies.changed_files(key.source)
        text = "".join(f"{rel}\0{text_of(tree / rel)}" for rel in files) if files is not None else key.source.label()
        extra = hashlib.sha256(text.encode()).hexdigest()
        read = files_read(self.reach.get(key.baseline), (c.nodeid for c in baseline.cases), self.hashing.hashes(), select)
        return digest(key.label(), select, self.options.prove, extra, read, self.hashing.hashes())

    def carried_row_cells(self, key: RowKey, select: tuple[str, ...], baseline: RunOutcome,
                          run_ids: frozenset[str] | None) -> dict[str, Any]:
        """Cells of this row that the kept run RAN (not inferred) under the same catalog entry and
        selection, for the cases no change since THAT kept run reaches (``harness/reach/incremental.py``): the
        newest run holding such a row, which may be older than the one the baseline's cells came from."""
        entry = self.entry(key)
        kept = self.kept_runs.newest(key.label(), lambda row: entry is not None and row.get("entry") == entry
                                    and row.get("select") == list(select),
                                    having=reach_file_name(key.baseline)) if self.options.reuse else None
        if kept is None:
            return {}
        old = run_from_data(kept.data["run"])
        base = self.carried_from.get(key.baseline)
        if base is not None and base.folder == kept.folder:
            rerun = self.rerun.get(key.baseline)
        elif self.options.prove or (data := kept.run.reach(reach_file_name(key.baseline))) is None:
            rerun = None
        else:
            rerun = cases_to_rerun(kept.run.snapshot, self.hashing.hashes(), self.project, Reach.from_data(data),
                                   [c.nodeid for c in old.cases], self.baseline_select[key.baseline])
        if rerun is None:
            return {}
        known = {c.nodeid for c in baseline.cases}
        if old.end != "completed" or any(c.nodeid not in known for c in old.cases):
            return {}  # a collection error, or a case the baseline no longer has: run the row again
        wanted = known if run_ids is None else run_ids
        return {c.nodeid: replace(c, carried=True) for c in old.cases
                if not c.inferred and c.nodeid in wanted and c.nodeid not in rerun}

    def reuse_row(self, key: RowKey, select: tuple[str, ...], row_digest: str) -> RunOutcome | None:
        """The kept row of ``key`` whose digest is ``row_digest`` (nothing it read changed), its logs copied
        into this run's kept folder, or ``None``: the row runs."""
        kept = self.kept_runs.matching(key.label(), row_digest) if self.options.reuse else None
        if kept is None:
            return None
        self.reused.add(key)
        run = self.carried(run_from_data(kept.data["run"]))
        self.remember(key, row_digest, run, select)
        return run
