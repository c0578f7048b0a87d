"""Output paths of ``seamgate run`` (``--json``/``--junit``/``--markdown``/``--output``), checked before anything runs.

A run takes minutes; an output it cannot write must be refused first, not after. ``check_outputs``
refuses, naming the option, the path and the fix:

- a folder where a report file is named, a file or device where ``--output`` names a folder
  (``USAGE_ERROR``);
- one regular file named by two options, in any spelling (``./r.json``, ``calc/../r.json``, a
  symlink to it, a hard link): one report would silently overwrite the other (``USAGE_ERROR``);
  a stream (character device, FIFO, socket: ``/dev/stdout``, ``/dev/null``) may take several
  reports, one after the other;
- a block device or anything that is neither a regular file nor a stream (``USAGE_ERROR``);
- a folder where no file can be created (read-only, permission denied, ``/proc``): a temp file
  is created there and removed at once, the one sure test (``ENVIRONMENT``).

``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N`` are written through the open descriptor (shell
redirection ``> log.txt`` makes ``/dev/stdout`` resolve to ``log.txt``, which must not be replaced);
they must be open for writing. The writer (``reports.atomic.write_atomic``) replaces only a regular
file (or creates a new one); a character device, FIFO or socket is written directly, and an error writing it (``ENOSPC``
on ``/dev/full``) is an ``ENVIRONMENT`` error naming the path.
"""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
from pathlib import Path
from typing import Sequence

from harness.errors import CommandLineError, EnvironmentProblem
from mutations.catalog import catalog_files
from reports.atomic import descriptor_of


def kind_of(mode: int) -> str:
    """A file type in words (``a FIFO (named pipe)``, ``a block device``, ...)."""
    for test, words in ((stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a regular file"),
                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                        (stat.S_ISLNK, "a symlink")):
        if test(mode):
            return words
    return "a special file"


def is_stream(mode: int) -> bool:
    """A file written in place, never replaced: a character device, a FIFO or a socket."""
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def inputs_of(project_root: Path, gate_paths: Sequence[Path], catalog_paths: Sequence[Path]) -> set[str]:
    """The files a run reads as its input (never to be replaced by a report): ``pyproject.toml``,
    the gate files, the catalog files."""
    files = [project_root / "pyproject.toml", *catalog_files([p for p in gate_paths if p.exists()]),
             *catalog_files([p for p in catalog_paths if p.exists()])]
    return {os.path.realpath(f) for f in files}


def check_outputs(reports: Sequence[tuple[str, Path | None]], output: Path | None = None,
                  cwd: Path | None = None, inputs: set[str] | frozenset[str] = frozenset()) -> None:
    """Refuse, before anything runs, report paths and an ``--output`` folder the run could not use.

    ``inputs`` (real paths, ``inputs_of``) are files the run reads: a report never replaces one, nor
    a Python source file (``--json calc/ops.py`` is a slip of the hand, and the file would be lost).
    """
    base = cwd or Path.cwd()
    seen: dict[object, str] = {}
    for option, path in reports:
        if path is None:
            continue
        target = path if path.is_absolute() else base / path
        if descriptor_of(path) is not None:
            _open_descriptor(option, path, descriptor_of(path))
            continue
        info = _stat(option, path, target)
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise CommandLineError(f"{option} {path}: {target} is a folder; name a file, e.g. {option} "
                                   f"{path}/report{Path(str(path)).suffix or '.txt'}")
        if info is not None and not stat.S_ISREG(info.st_mode) and not is_stream(info.st_mode):
            raise CommandLineError(f"{option} {path}: {target} is {kind_of(info.st_mode)}, not a regular file; "
                                   "seamgate writes a report to a regular file, a character device, a FIFO or "
                                   "/dev/stdout; name a file")
        real = os.path.realpath(target)
        if info is not None and stat.S_ISREG(info.st_mode) and (real in inputs or real.endswith(".py")):
            what = "a Python source file" if real.endswith(".py") else "an input of this run (its config, a gate " \
                                                                          "file or a mutation catalog)"
            raise CommandLineError(f"{option} {path}: {real} is {what}; the report would replace it: name another "
                                   f"file, e.g. {option} {Path(tempfile.gettempdir()) / ('report' + _suffix(option))}")
        if info is None or stat.S_ISREG(info.st_mode):
            key: object = (info.st_dev, info.st_ino) if info is not None else os.path.realpath(target)
            if key in seen:
                raise CommandLineError(
                    f"{option} {path}: the same file as {seen[key]} ({os.path.realpath(target)}); one report "
                    "would overwrite the other: name a different file for each option")
            seen[key] = f"{option} {path}"
            _creatable(option, path, target, Path(os.path.realpath(target)).parent)
    if output is not None:
        check_output_folder(output, base)


def _suffix(option: str) -> str:
    return {"--json": ".json", "--junit": ".xml", "--markdown": ".md"}.get(option, ".txt")


def check_output_folder(output: Path, base: Path) -> None:
    """``--output DIR``: a folder (or a path where one can be made) in which files can be created."""
    target = output if output.is_absolute() else base / output
    info = _stat("--output", output, target)
    if info is not None and not stat.S_ISDIR(info.st_mode):
        raise CommandLineError(f"--output {output}: {target} is {kind_of(info.st_mode)}, not a folder; "
                               "--output names a folder for this run's logs and reports, e.g. --output "
                               f"{Path(tempfile.gettempdir()) / 'seamgate-run'}")
    _creatable("--output", output, target, Path(os.path.realpath(target)))


def _open_descriptor(option: str, path: Path, descriptor: int) -> None:
    """``/dev/stdout``, ``/dev/fd/N``: written through the descriptor (never by replacing what it resolves to)."""
    try:
        flags = fcntl.fcntl(descriptor, fcntl.F_GETFL)
    except OSError:
        raise CommandLineError(f"{option} {path}: file descriptor {descriptor} is not open in this process; "
                               "name a file") from None
    if flags & os.O_ACCMODE == os.O_RDONLY:
        raise CommandLineError(f"{option} {path}: file descriptor {descriptor} is open for reading only; name a file")


def _stat(option: str, path: Path, target: Path) -> os.stat_result | None:
    try:
        return os.stat(target)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a symlink loop, a path through a file, permission denied
        raise CommandLineError(f"{option} {path}: cannot use {target}: {exc.strerror or exc}; name another path") \
            from None


def _creatable(option: str, path: Path, target: Path, folder: Path) -> None:
    """Create and remove a temp file in ``folder`` (or the nearest folder above it that exists)."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # the writer creates missing folders
    try:
        fd, probe = tempfile.mkstemp(prefix=".seamgate-probe-", dir=folder)
    except OSError as exc:
        try:
            read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
        except OSError:
            read_only = False
        why = "Read-only file system" if read_only else exc.strerror or str(exc)
        raise EnvironmentProblem(
            f"{option} {path}: cannot write {target}: "
            f"{folder} is not writable ({why}); choose a writable location, e.g. "
            f"{option} {Path(tempfile.gettempdir()) / (path.name or 'seamgate-out')}") from None
    os.close(fd)
    os.unlink(probe)
