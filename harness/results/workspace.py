"""The kept results of one ``seamgate run``: a folder that outlives the process, like cargo-mutants'
``mutants.out/``.

``.seamgate/runs/<UTC timestamp>-<pid>/`` in the project (or ``--output DIR``) holds every run's
``stdout.txt``/``stderr.txt``/``junit.xml``/``counts.json`` under ``runs/``, the baselines' reach,
``outcomes.json`` (the JSON report) and ``matrix.json`` (every row of the kill matrix, each cell
with its kind and whether it was inferred). ``.seamgate/runs/latest`` points at the newest, and
only the newest ``KEEP`` folders stay. A message that names a log therefore names a file that
still exists after the run. The materialized trees are not kept: they live in a temp folder that
is removed at exit (``harness/run/runner.py``).

A project whose ``.seamgate/`` cannot be written keeps its results in the temp folder instead
(``seamgate-kept-<digest of the project path>``), and says where.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
import re
from typing import TYPE_CHECKING, Any, Mapping

from harness.results.lock import make_state_folder
from reports.atomic import write_atomic

if TYPE_CHECKING:  # a type only: the plan never needs this module back
    from harness.plan.matrix import RowKey

#: How many kept run folders stay in ``.seamgate/runs`` (the oldest go first).
KEEP = 10
LATEST = "latest"


def runs_root(project: Path) -> Path:
    """``.seamgate/runs`` of ``project``, or a folder in the temp folder when that cannot be written."""
    folder = project / ".seamgate" / "runs"
    try:
        make_state_folder(project)  # .seamgate/ ignores itself (harness/results/lock.py)
        folder.mkdir(parents=True, exist_ok=True)
        if os.access(folder, os.W_OK):
            return folder
    except OSError:
        pass
    fallback = temp_runs_root(project)
    fallback.mkdir(parents=True, exist_ok=True)
    return fallback


def temp_runs_root(project: Path) -> Path:
    """Where a project whose ``.seamgate/`` cannot be written keeps its runs (the run prints it)."""
    digest = hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"seamgate-kept-{digest}"


def new_kept_folder(project: Path, output: Path | None = None) -> Path:
    """A fresh folder for this invocation's results: ``output`` when given, else under ``runs_root``."""
    if output is not None:
        output.mkdir(parents=True, exist_ok=True)
        return output.resolve()
    root = runs_root(project)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for n in range(1, 1000):  # two runs of one process within a second: -2, -3, ...
        folder = root / (f"{stamp}-{os.getpid()}" + (f"-{n}" if n > 1 else ""))
        try:
            folder.mkdir(parents=True, exist_ok=False)
            return folder
        except FileExistsError:
            continue
    raise FileExistsError(f"no free run folder under {root}")


def point_latest(folder: Path) -> None:
    """``latest`` beside ``folder`` points at it (replaced atomically); the oldest folders beyond ``KEEP`` go."""
    if swap_link(folder, LATEST):
        prune(folder.parent)


def swap_link(folder: Path, name: str) -> bool:
    """Point the link ``name`` beside ``folder`` at it, replaced atomically; False when links fail here."""
    link, temp = folder.parent / name, folder.parent / f".{name}.{os.getpid()}"
    try:
        temp.unlink(missing_ok=True)
        os.symlink(folder.name, temp)
        os.replace(temp, link)
    except OSError:
        temp.unlink(missing_ok=True)
        return False
    return True


def prune(root: Path, keep: int = KEEP) -> list[Path]:
    """Remove all but the newest ``keep`` run folders under ``root`` (never the one ``latest`` names)."""
    latest = (root / LATEST).resolve() if (root / LATEST).exists() else None
    folders = sorted((p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and p.name[:1].isdigit()),
                     key=lambda p: p.name)
    removed = []
    for old in folders[:-keep] if keep else folders:
        if old.resolve() != latest:
            shutil.rmtree(old, ignore_errors=True)
            removed.append(old)
    return removed


def latest(project: Path) -> Path | None:
    """The newest kept run folder of ``project``, if any."""
    link = runs_root(project) / LATEST
    return link.resolve() if link.exists() else None


def write_matrix(path: Path, rows: Mapping[str, Any]) -> None:
    """``matrix.json``: row label -> its cases (node id -> kind, inferred), as the run filled them."""
    write_atomic(path, json.dumps({"schema": 1, "rows": rows}, indent=1, sort_keys=True) + "\n")


def reach_file_name(key: RowKey) -> str:
    """The kept file of a baseline row's recorded reach (``seamgate run --dry-run`` reads it back)."""
    return f"reach-{slug(key.label())}.json"


def slug(text: str) -> str:
    """``text`` as a file name: runs of anything but letters, digits, ``_.-`` become ``-``; at most 80 characters."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text)[:80]
