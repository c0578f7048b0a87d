"""What a run keeps in its folder (outcomes, matrix, rows, sources) and whether ``latest`` moves to it.

``seamgate report`` reads the outcomes; the next run reads the rows, their file hashes and the sources
(``harness/results/reuse.py``, ``harness/reach/incremental.py``). A partial run's folder is kept, but
``latest`` goes on naming the last whole run: ``seamgate report`` and a reader of ``latest`` must not
take part of the suite for all of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from harness.exit_codes import ExitCode
from harness.plan.matrix import RowKey
from harness.reach.incremental import write_sources
from harness.reach.reach import Reach
from harness.results.reuse import write_kept_rows
from harness.results.workspace import latest, point_latest, prune, write_matrix
from harness.run.row_result import RowResult
from reports.json_out import write_json
from reports.outcome import Report

if TYPE_CHECKING:
    from harness.run.runner import RunOptions


def keep_run(kept: Path, project: Path, options: RunOptions, report: Report, code: ExitCode, *, plan_id: str,
             rows: Mapping[RowKey, RowResult], kept_rows: Mapping[str, Mapping[str, Any]], files: Mapping[str, str],
             reaches: Iterable[Reach | None]) -> None:
    """Write ``outcomes.json``, ``matrix.json``, the kept rows (with the project's file ``hashes``) and the
    sources the ``reaches`` name into ``kept``, and point ``latest`` at it unless the run is partial."""
    write_json(kept / "outcomes.json", report, int(code), shard=options.shard, plan=plan_id)
    write_matrix(kept / "matrix.json", matrix_rows(rows))
    write_kept_rows(kept, kept_rows, files=files)
    write_sources(kept, project, reaches)
    if options.output is None and not partial(options):
        point_latest(kept)
    elif options.output is None:
        prune(kept.parent)


def matrix_rows(rows: Mapping[RowKey, RowResult]) -> dict[str, dict[str, dict[str, Any]]]:
    """``matrix.json``'s rows: each row that ran, by label: node id -> kind, inferred, carried, duration."""
    return {key.label(): {c.nodeid: {"kind": c.kind, "inferred": c.inferred, "carried": c.carried,
                                     "duration": c.duration}
                          for c in row.outcome.cases}
            for key, row in rows.items() if row.ok}


def partial(options: RunOptions) -> str:
    """The options that made a run part of the suite (``--arm``, ``--gate``, ``--shard``); "" for a whole run."""
    parts = [f"--arm {a}" for a in options.arms] + [f"--gate {g}" for g in options.gate_ids]
    if options.shard:
        parts.append(f"--shard {options.shard[0]}/{options.shard[1]}")
    return " ".join(parts)


def partial_note(project: Path, kept: Path | None, options: RunOptions) -> str:
    """What a partial run kept in ``kept`` says about ``latest`` (empty for a whole run or ``--output``)."""
    if kept is None or options.output is not None or not partial(options):
        return ""
    whole = latest(project)
    names = f"latest still names {whole.name} (the last whole run)" if whole else "no whole run is kept yet"
    return (f"partial run ({partial(options)}): .seamgate/runs/latest was not moved to it; {names}; "
            f"this run is kept in {kept}")
