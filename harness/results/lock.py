"""The repository lock: one ``seamgate run`` per repository at a time.

``fcntl.flock`` on ``.seamgate/run.lock`` in the project (the folder ignores itself), or on a file in the temp
folder named for the project's path when the project is read-only. The kernel drops a flock when
its holder dies, even by SIGKILL, so a crashed run never leaves the repository locked.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType


class Locked(RuntimeError):
    """Another seamgate run holds this repository's lock."""


#: What ``.seamgate/.gitignore`` holds: the folder ignores itself, so ``git add -A`` never commits
#: the lock or kept runs of a project whose own ``.gitignore`` does not name it (issue 15).
SELF_IGNORE = "# written by seamgate: its lock and kept runs are never committed\n*\n"


def make_state_folder(project_root: Path) -> Path:
    """``.seamgate/`` of the project, made when missing, with a ``.gitignore`` of its own (a user's is kept)."""
    folder = project_root / ".seamgate"
    folder.mkdir(exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        try:
            with open(ignore, "x", encoding="utf-8") as fh:
                fh.write(SELF_IGNORE)
        except FileExistsError:
            pass
    return folder


def lock_path(project_root: Path) -> Path:
    """Where the lock lives: ``.seamgate/run.lock``, or the temp folder for a read-only project."""
    try:
        folder = make_state_folder(project_root)
        if os.access(folder, os.W_OK):
            return folder / "run.lock"
    except OSError:
        pass
    return temp_lock_path(project_root)


def temp_lock_path(project_root: Path) -> Path:
    """The lock of a project whose ``.seamgate/`` cannot be written: in the temp folder, removed on release."""
    digest = hashlib.sha256(str(project_root.resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"seamgate-{digest}.lock"


@dataclass
class RepositoryLock:
    """Context manager: holds the lock or raises ``Locked`` naming the holder's pid."""

    project_root: Path
    fd: int | None = None
    #: The lock file taken (``None`` until ``__enter__``).
    path: Path | None = None

    def __enter__(self) -> RepositoryLock:
        path = lock_path(self.project_root)
        self.path = path
        for _ in range(3):
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise Locked(f"another seamgate run (pid {holder}) holds {path}; wait for it to finish, "
                             f"or stop it, then run again") from None
            # A temp lock is removed on release: the file we locked must still be the one the path names
            # (else a holder removed it between our open and our lock, and a third run may create a new one).
            if _same_file(fd, path):
                break
            os.close(fd)
        else:
            raise Locked(f"the lock file {path} kept being replaced while we took it; run again")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.fd is not None:
            # Nothing is left in the temp folder (a read-only checkout's lock): removed while still held.
            if self.path is not None and self.path.parent != self.project_root / ".seamgate":
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except OSError:
        return False
