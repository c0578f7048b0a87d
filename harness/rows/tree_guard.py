"""Watches the user's project tree during a run: a test that writes into it (not its copy) makes its gates ERROR.

Every run happens in a copy (``harness/project_copy.py``), but a test can still write to an absolute
path inside the user's tree. ``TreeGuard`` takes a fingerprint of the files a copy is made from
(``project_files``: git's tracked and untracked-not-ignored files, ``copy_include``/``copy_exclude``)
and of the folders holding them, once, when the run starts. Around every pytest run it compares
again: ``os.stat`` of each file (size, mtime_ns, inode, mode) and of each folder (a folder's mtime
changes when a name is added to it or removed). Only what changed is read: a file whose stat moved
is compared byte for byte with the working tree's copy (same bytes: only touched, not a change); a
folder whose mtime moved is listed again. The changes that appeared while a run ran are charged to
that run; every gate that read such a run (every gate, for a baseline run) is an ERROR naming the
files, never a PASS. And the tree is put back as soon as the run ends: a file the run created is
removed, a file it changed or removed is restored (bytes, mode, mtime) from the snapshot taken before
the run (the working tree's copy every run starts from), and the ERROR says both. A file without a
snapshot is named as not restored. Nothing found in the tree is lost on the way: what the guard removes or
overwrites is first kept under ``.seamgate/displaced/<stamp>/`` (same relative path), which the ERROR names;
a file the user edited while the run ran looks the same as one a test wrote, and is kept there too. The
newest ``KEEP`` such folders are kept, as the newest kept runs are.

Cost on this repository (290 files, 2-core shared box): the listing once per invocation (~0.7 s:
git ls-files), then ~3 ms per comparison, two per run (``tests/reliability/test_tree_guard.py``
measures it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from harness.project_copy import project_files
from harness.results.workspace import KEEP, prune
from reports.outcome import ArmOutcome, Verdict

#: The runner's own folder in the project (lock, kept runs): never the user's files.
_OWN = ".seamgate"


def _inside(root: Path, folder: Path | None) -> str | None:
    """``folder`` relative to ``root`` (posix), when it lies inside it."""
    if folder is None:
        return None
    try:
        return Path(os.path.realpath(folder)).relative_to(os.path.realpath(root)).as_posix()
    except ValueError:
        return None


def _key(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode)


class TreeGuard:
    """The fingerprint of ``root``'s copied files, and the changes each watched run saw appear."""

    def __init__(self, root: Path, files: Iterable[str], original: Callable[[str], Path | None] | None = None,
                 ignore: Path | None = None) -> None:
        self.root = root
        #: The run's own kept folder when ``--output`` puts it inside the project: written on purpose.
        self.ignored = _inside(root, ignore)
        self.files = sorted(f for f in files if not self._ignored(f))
        #: Where the unchanged bytes of a file are (the working tree's copy), to tell a touch from a write.
        self.original = original or (lambda rel: None)
        self.stats: dict[str, tuple[int, int, int, int] | None] = {rel: self._stat(rel) for rel in self.files}
        folders = {""} | {str(Path(rel).parent) if "/" in rel else "" for rel in self.files}
        self.folders: dict[str, tuple[tuple[int, int, int, int] | None, frozenset[str]]] = {
            folder: (self._stat(folder), self._names(folder)) for folder in folders}
        #: run label -> the changes that appeared while it ran.
        self.touched: dict[str, tuple[str, ...]] = {}
        #: run label -> what was undone: ``removed F`` (created by the run), ``restored F``, ``unrestored F``.
        self.undone: dict[str, tuple[str, ...]] = {}
        #: Where what the guard removes or overwrites is kept first (relative to ``root``; made at the first use).
        self.aside = f"{_OWN}/displaced/{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
        self.displaced = False
        self._lock = threading.Lock()

    @classmethod
    def start(cls, root: Path, original: Callable[[str], Path | None] | None = None,
              ignore: Path | None = None) -> TreeGuard:
        return cls(root, project_files(root), original, ignore)

    def _ignored(self, rel: str) -> bool:
        return self.ignored is not None and (rel == self.ignored or rel.startswith(self.ignored + "/"))

    def _stat(self, rel: str) -> tuple[int, int, int, int] | None:
        try:
            return _key(os.lstat(self.root / rel))
        except OSError:
            return None

    def _names(self, folder: str) -> frozenset[str]:
        try:
            return frozenset(name for name in os.listdir(self.root / folder) if not (folder == "" and name == _OWN))
        except OSError:
            return frozenset()

    def changes(self) -> set[str]:
        """Every change since the start: ``changed F``, ``removed F``, ``added F`` (cheap when none)."""
        found: set[str] = set()
        for rel, before in self.stats.items():
            now = self._stat(rel)
            if now == before:
                continue
            if now is None:
                found.add(f"removed {rel}")
            elif not self._same_bytes(rel):
                found.add(f"changed {rel}")
        for folder, (before, names) in self.folders.items():
            if self._stat(folder) == before:
                continue
            for name in sorted(self._names(folder) - names):
                rel = (Path(folder) / name).as_posix() if folder else name
                if not self._ignored(rel):
                    found.add(f"added {rel}")
        return found

    def _same_bytes(self, rel: str) -> bool:
        copy = self.original(rel)
        if copy is None:
            return False
        try:
            return (self.root / rel).read_bytes() == copy.read_bytes()
        except OSError:
            return False

    @contextlib.contextmanager
    def watch(self, label: str) -> Iterator[None]:
        """Charge to ``label`` whatever changes appear in the user's tree while the block runs."""
        before = self.changes()
        try:
            yield
        finally:
            new = self.changes() - before
            if new:
                undone = [self._undo(change) for change in sorted(new)]
                with self._lock:
                    self.touched[label] = tuple(sorted(set(self.touched.get(label, ())) | new))
                    self.undone[label] = tuple(sorted(set(self.undone.get(label, ())) | set(undone)))

    def _keep_aside(self, rel: str) -> None:
        """Copy what is at ``rel`` now (a file, a link or a folder) to ``aside``, before the guard removes or
        overwrites it; raises ``OSError`` when it cannot (then nothing is removed)."""
        path, kept = self.root / rel, self.root / self.aside / rel
        if not path.exists() and not path.is_symlink():
            return  # removed during the run: nothing there to keep
        kept.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir() and not path.is_symlink():
            shutil.copytree(path, kept, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(path, kept, follow_symlinks=False)
        if not self.displaced:  # this run's folder is new: the oldest beyond the newest ``KEEP`` go
            self.displaced = True
            prune((self.root / self.aside).parent, KEEP)

    def _undo(self, change: str) -> str:
        """Put one change back: an added path is removed, a changed or removed file restored from its snapshot
        (what was there kept aside first)."""
        what, rel = change.split(" ", 1)
        path = self.root / rel
        try:
            if what == "added":
                self._keep_aside(rel)
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
                return f"removed {rel}"
            copy = self.original(rel)
            before = self.stats.get(rel)
            # The copy was made with copy2 (size and mtime kept): one that differs from the file's stat at the
            # start was itself written by a run, and is no snapshot.
            if copy is None or before is None or not copy.is_file() or _key(os.stat(copy))[:2] != before[:2]:
                return f"unrestored {rel}"
            self._keep_aside(rel)
            if path.is_symlink() or path.is_dir():
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
            shutil.copyfile(copy, path)
            os.chmod(path, stat.S_IMODE(before[3]))
            os.utime(path, ns=(before[1], before[1]))
            return f"restored {rel}"
        except OSError:
            return f"unrestored {rel}"

    def verdict(self, outcome: ArmOutcome, labels: Iterable[str]) -> ArmOutcome:
        """``outcome``, or an ERROR naming the files when a run it read (or any baseline) changed the tree."""
        with self._lock:
            touched = dict(self.touched)
        read = set(labels) | {r.label for r in outcome.runs}
        charged = [label for label in touched if label in read or label.startswith("baseline")]
        files = sorted({change for label in charged for change in touched[label]})
        if not files:
            return outcome
        with self._lock:
            undone = sorted({u for label in charged for u in self.undone.get(label, ())})
        aside = self.aside if self.displaced else None
        return replace(outcome.with_verdict(Verdict.ERROR, error_message(files, undone, aside)),
                       facts={**outcome.facts, "tree_changed": files, "tree_undone": undone})


def _listed(paths: Sequence[str]) -> str:
    return ", ".join(paths[:8]) + (f" (and {len(paths) - 8} more)" if len(paths) > 8 else "")


def error_message(changes: Sequence[str], undone: Sequence[str] = (), aside: str | None = None) -> str:
    """The ERROR of a gate whose runs changed the user's tree: what changed, what seamgate put back, and where
    it kept what it found there (``aside``)."""
    kinds: dict[str, list[str]] = {"removed": [], "restored": [], "unrestored": []}
    for item in undone:
        what, rel = item.split(" ", 1)
        kinds[what].append(rel)
    put_back = [f"seamgate removed {_listed(kinds['removed'])} (created during the run)"] if kinds["removed"] else []
    if kinds["restored"]:
        put_back.append(f"restored {_listed(kinds['restored'])} from the snapshot taken before the run")
    if kinds["unrestored"]:
        put_back.append(f"could NOT restore {_listed(kinds['unrestored'])} (no snapshot; git diff shows it)")
    if aside is not None:
        put_back.append(f"what it found there is kept in {aside}/ (an edit made during the run is not lost)")
    done = "; ".join(put_back) if put_back else "seamgate restored nothing"
    return (f"the project tree itself changed while this gate's runs ran: {_listed(changes)}; a test wrote into the "
            f"user's tree (an absolute path) instead of its copy, or the files were edited during the run; {done}; "
            "the verdict cannot be trusted: find the writer, then run again")
