"""JSON report: every arm outcome with its runs and provenance, written atomically.

The layout is ``outcomes.json`` of a kept run and the output of ``seamgate report --format json``;
``harness/results/result_schema.json`` publishes it and ``reports.results`` reads it back. Optional keys:
``shard`` (``{"k", "n"}`` of a ``--shard K/N`` run), ``plan`` (digest of every gate and arm the
run was cut from, shared by all shards of one run) and ``sweep`` (``reports.mutants``).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

from reports.mutants import SweepResult, sweep_to_json
from reports.outcome import ArmOutcome, Report, RunOutcome

#: Bumped when a reader would misread the layout.
SCHEMA_VERSION = 1


def run_to_json(run: RunOutcome) -> dict[str, Any]:
    return {
        "label": run.label, "end": run.end, "exit_code": run.exit_code, "wall": round(run.wall, 3),
        "session": round(run.session, 3), "detail": run.detail, "summary": run.summary(),
        "inferred": sum(1 for c in run.cases if c.inferred), "log": run.log,
        "cases": [{"nodeid": c.nodeid, "kind": c.kind, "message": c.message,
                   "assertions_passed": c.assertions_passed, "assertions_failed": c.assertions_failed,
                   "duration": round(c.duration, 3), "inferred": c.inferred,
                   "carried": c.carried}
                  for c in run.cases],
    }


def outcome_to_json(outcome: ArmOutcome) -> dict[str, Any]:
    return {
        "gate": outcome.gate, "arm": outcome.arm, "kind": outcome.kind, "title": outcome.title,
        "verdict": outcome.verdict.value, "message": outcome.message,
        "provenance": outcome.provenance.to_json() if outcome.provenance else None,
        "facts": dict(outcome.facts), "runs": [run_to_json(r) for r in outcome.runs],
    }


def report_to_json(report: Report, exit_code: int, *, shard: tuple[int, int] | None = None, plan: str = "",
                   sweep: SweepResult | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema": SCHEMA_VERSION, "exit_code": exit_code, "interrupted": report.interrupted,
        "unfinished": list(report.unfinished),
        "baseline_red": [run_to_json(r) for r in report.baseline_red],
        "outcomes": [outcome_to_json(o) for o in report.outcomes],
    }
    if shard is not None:
        data["shard"] = {"k": shard[0], "n": shard[1]}
    if plan:
        data["plan"] = plan
    if sweep is not None:
        data["sweep"] = sweep_to_json(sweep)
    return data


def plan_digest(checks: Iterable[tuple[str, str]]) -> str:
    """sha256 of the sorted ``(gate, arm)`` pairs of a whole plan: the shards of one run agree on it."""
    digest = hashlib.sha256()
    for gate, arm in sorted(set(checks)):
        digest.update(f"{gate}\0{arm}\n".encode())
    return digest.hexdigest()


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


def write_json(path: Path, report: Report, exit_code: int, *, shard: tuple[int, int] | None = None, plan: str = "",
               sweep: SweepResult | None = None) -> None:
    data = report_to_json(report, exit_code, shard=shard, plan=plan, sweep=sweep)
    write_atomic(path, json.dumps(data, indent=2, default=str) + "\n")
