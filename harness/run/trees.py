"""Materialized trees: each source state of a run made once in the run's temp folder, or why it could not be.

The working tree's copy comes first (every baseline runs in it); a mutation's copy is then seeded with
the bytecode the baselines left in it (``Trees.seed_bytecode``). A tree that cannot be made (a rotted
mutation, a bad ref) is kept as a failed ``MaterializedTree`` (``harness/run/materialized.py``): an ERROR of
each gate that reads it, never of the run.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any, Callable

from harness.gates.model import SourceState
from harness.judge.redfirst import materialize_ref
from harness.project_copy import materialize as offtree
from harness.results.workspace import slug
from harness.run.materialized import MaterializedTree
from harness.run.signals import Interrupted

#: ``(project_root, dest, state) -> dest``: writes a source state's tree into the empty ``dest``.
Materializer = Callable[[Path, Path, SourceState], Path]


class CatalogMaterializer:
    """The real materializer: ``harness.project_copy`` for the tree and mutations, git for refs."""

    def __init__(self, catalog: Any) -> None:
        self.catalog = catalog

    def __call__(self, project: Path, dest: Path, state: SourceState) -> Path:
        if state.kind == "ref":
            return materialize_ref(project, state.ref or "", state.overlay, dest)
        mutation = self.catalog.get(state.mutation) if state.kind == "mutation" else None
        return offtree(project, dest, mutation)

    def changed_files(self, state: SourceState) -> tuple[str, ...] | None:
        """The files ``state`` changes against the working tree; ``None`` when unknown (a git ref)."""
        if state.kind == "mutation" and state.mutation in self.catalog:
            return (self.catalog.get(state.mutation).target,)
        return () if state.kind == "tree" else None


class MadeTrees(dict[SourceState, MaterializedTree]):
    """Source state -> its ``MaterializedTree``; a bare ``Path`` set here (a tree made elsewhere, as a test's
    prepared copy) is kept as a tree made there."""

    def __setitem__(self, state: SourceState, made: MaterializedTree | Path) -> None:  # type: ignore[override]
        super().__setitem__(state, made if isinstance(made, MaterializedTree) else MaterializedTree.made(made))


class Trees:
    """The materialized tree of each source state of one run, made once (thread-safe), or why it was not."""

    def __init__(self, project: Path, materializer: Materializer) -> None:
        self.project, self.materializer = project, materializer
        #: Source state -> its tree, or why it could not be made (``MadeTrees``).
        self.made = MadeTrees()
        self.locks: dict[SourceState, threading.Lock] = {}
        self.guard = threading.Lock()
        #: Where the trees go: ``trees/`` in the run's temp folder (set when the run starts).
        self.folder: Path | None = None

    def tree(self, state: SourceState) -> MaterializedTree:
        """The materialized tree of ``state`` (once per invocation), or why it could not be made."""
        with self.guard:
            lock = self.locks.setdefault(state, threading.Lock())
        with lock:
            if state not in self.made:
                dest = self.folder / slug(state.label())
                try:
                    path = self.materializer(self.project, dest, state)
                except Interrupted:
                    raise  # SIGINT/SIGTERM mid-copy: the run is interrupted, not the copy failed
                except Exception as exc:  # noqa: BLE001 - rot, bad ref: an ERROR of the gates using it
                    self.made[state] = MaterializedTree.failed(exc)
                else:
                    self.made[state] = MaterializedTree.made(path)
                    if state.kind == "mutation":
                        self.seed_bytecode(path, state)
            return self.made[state]

    def original_file(self, rel: str) -> Path | None:
        """``rel`` in the working tree's copy, once made (the bytes the user's file had at the start)."""
        tree = self.made.get(SourceState())
        return tree.path / rel if tree is not None and tree.ok else None

    def changed_files(self, state: SourceState) -> tuple[str, ...] | None:
        """The files ``state`` changes against the working tree (``CatalogMaterializer.changed_files``);
        ``None`` when unknown (a git ref, or a materializer that cannot say)."""
        changed = getattr(self.materializer, "changed_files", None)
        return changed(state) if changed is not None else None

    def seed_bytecode(self, tree: Path, state: SourceState) -> None:
        """Give a mutation's copy the bytecode the baseline runs left in the working tree's copy.

        Every row collects the whole union, and pytest rewrites each test module's asserts on import
        (half of a row's collection when done afresh). Copied, the bytecode is valid for every file the
        mutation left alone (same source, same mtime: ``copy2``). The mutated file's bytecode is NOT
        copied: a pyc is checked by whole-second mtime and size only, and a mutation written within
        the second of the copy, keeping the size (``a + b`` -> ``a - b``), would pass as unchanged.
        """
        files = self.changed_files(state)
        with self.guard:
            made = self.made.get(SourceState())
        if made is None or not made.ok or files is None:
            return
        base = made.path
        stale = {(str(Path(rel).parent / "__pycache__"), Path(rel).stem + ".") for rel in files}
        rewritten = pytest_repoints_cached_code()
        for cache in base.rglob("__pycache__"):
            rel = cache.relative_to(base)
            target = tree / rel
            if not target.parent.is_dir() or target.exists():
                continue
            prefixes = tuple(stem for folder, stem in stale if folder == str(rel))
            shutil.copytree(cache, target, ignore=lambda _, names, p=prefixes: [
                n for n in names if (p and n.startswith(p)) or (not rewritten and "-pytest-" in n)])


def pytest_repoints_cached_code() -> bool:
    """Whether this pytest re-points a cached rewritten module's code at the file that loads it.

    pytest 9 does (``_pytest.assertion.rewrite._fix_code_filename``, as Python's own loader does for
    a plain pyc); older releases exec the cached code as compiled, so a test module loaded in a
    mutation's copy from the baseline copy's cache would name the BASELINE copy in ``co_filename``
    (its tracebacks, ``inspect.getsourcefile`` and every path a test derives from its own frame).
    Without it, pytest's rewritten modules are not seeded (plain pycs still are).
    """
    try:
        from _pytest.assertion import rewrite
    except ImportError:  # pragma: no cover - pytest is a dependency
        return False
    return hasattr(rewrite, "_fix_code_filename")


def text_of(path: Path) -> str:
    """The text of a tree's file; ``""`` when it is absent or not UTF-8 (reach and digests read it so)."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
