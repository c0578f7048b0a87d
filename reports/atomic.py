"""Atomic writes: a report or kept file replaced whole (temp file + rename), a device or FIFO written in place.

Every file seamgate writes for a user (``--json``/``--junit``/``--markdown``/``--out``) and every kept
file (``.seamgate/``) goes through ``write_atomic``; ``harness/cli/outputs.py`` checks the paths before a
run with ``descriptor_of``. Standard library only, so any package of ours may import it.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


class OutputWriteError(OSError):
    """A report could not be written where the user asked; the message names the path (an ENVIRONMENT error)."""


def descriptor_of(path: Path | str) -> int | None:
    """The open file descriptor ``path`` names (``/dev/stdout`` 1, ``/dev/stderr`` 2, ``/dev/fd/N``,
    ``/proc/self/fd/N``), else ``None``. Such a path is written through the descriptor: resolved, it may
    be the regular file a shell redirected into, which must never be replaced."""
    import re

    text = os.path.normpath(str(path))
    named = {"/dev/stdout": 1, "/dev/stderr": 2}.get(text)
    found = re.match(r"^/(?:dev/fd|proc/self/fd)/(\d+)$", text)
    return named if named is not None else int(found.group(1)) if found else None


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path``; a regular file is replaced atomically, nothing else ever is.

    A regular file (or a new one) gets a temp file beside it, renamed over it: readers never see
    half. The rename goes to where a symlink points, so the link stays a link; the file keeps its
    mode (a new one gets 0666 less the umask). A character device, FIFO or socket (``/dev/stdout``,
    ``/dev/null``, ``/dev/full``) is written in place, never replaced; a FIFO no process reads is
    refused rather than waited on. Anything else (a folder, a block device) is refused. Every
    failure is an ``OutputWriteError`` naming ``path``.
    """
    import stat

    real = Path(os.path.realpath(path))
    try:
        descriptor = descriptor_of(path)
        if descriptor is not None:
            _write_descriptor(descriptor, text)
            return
        info = _stat_or_none(real)
        if info is not None and not stat.S_ISREG(info.st_mode):
            if stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode):
                _write_in_place(real, text)
                return
            raise OutputWriteError(errno.EINVAL, f"cannot write {path}: it is not a regular file, a character "
                                                 "device or a FIFO; name a file")
        _replace_regular(real, text, stat.S_IMODE(info.st_mode) if info is not None else None)
    except OutputWriteError:
        raise
    except OSError as exc:
        why = "it is a FIFO that no process reads" if exc.errno == errno.ENXIO else exc.strerror or str(exc)
        raise OutputWriteError(exc.errno, f"cannot write {path}: {why}; choose another path (or free space "
                                          "there)") from exc


def _stat_or_none(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def _replace_regular(real: Path, text: str, mode: int | None) -> None:
    import stat

    real.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", dir=real.parent)
    try:
        if mode is None:
            umask = os.umask(0o022)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        now = _stat_or_none(real)  # what is there now, right before the rename: still never a non-file
        if now is not None and not stat.S_ISREG(now.st_mode):
            raise OutputWriteError(errno.EEXIST, f"cannot write {real}: it became a special file while seamgate "
                                                 "ran; it was left alone")
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_descriptor(descriptor: int, text: str) -> None:
    """Write through an inherited descriptor, after what Python buffered for it (the order stays)."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and stream.fileno() == descriptor:
                stream.flush()
        except (AttributeError, OSError, ValueError):  # a StringIO (tests) has no descriptor
            pass
    data = text.encode("utf-8")
    while data:
        data = data[os.write(descriptor, data):]


def _write_in_place(real: Path, text: str) -> None:
    """Write a device, FIFO or socket as it is (a FIFO no one reads fails with ENXIO, not a hang)."""
    fd = os.open(real, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        os.set_blocking(fd, True)
        data = text.encode("utf-8")
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)
