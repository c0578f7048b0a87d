"""User-facing errors of seamgate: each carries the exit code it ends the process with.

A ``SeamgateUsageError`` is a mistake the user can fix (a gate file, the config, the command
line); the CLI prints its message after ``seamgate: error:`` with no traceback. Errors of the
mutation engine live in ``mutations.errors`` (``mutations`` may not import ``harness``);
``harness/exit_mapping.py`` (``code_for_error``) maps both to exit codes.
"""

from __future__ import annotations

import errno
import tempfile
from typing import Sequence

from harness.exit_codes import ExitCode
from reports.atomic import OutputWriteError


class SeamgateUsageError(Exception):
    """A mistake of the user's, with a message naming the file/option/value and the fix."""

    #: The code the process exits with when this error ends it.
    exit_code: ExitCode = ExitCode.USAGE_ERROR


class GateFileError(SeamgateUsageError):
    """One or more gate files are wrong; ``problems`` are ``file:line:col: gate 'id': what — fix``."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        if len(self.problems) == 1:
            message = self.problems[0]
        else:
            message = f"{len(self.problems)} problems in the gate files:\n" + "\n".join(self.problems)
        super().__init__(message)


class ConfigError(SeamgateUsageError):
    """The ``[tool.seamgate]`` table of ``pyproject.toml`` is wrong."""


class CommandLineError(SeamgateUsageError):
    """An option value argparse accepted but seamgate does not (``--shard 3/2``, unknown gate id)."""


class EnvironmentProblem(SeamgateUsageError):
    """The environment refused us (an output location we cannot write, a full disk): not a bug."""

    exit_code = ExitCode.ENVIRONMENT


#: ``errno`` values that mean the machine refused a write, whatever seamgate was doing, and the fix.
_REFUSALS = {
    errno.ENOSPC: "the disk is full: free space there, or point TMPDIR at a folder with room",
    errno.EDQUOT: "the disk quota is used up: free space there, or point TMPDIR at a folder with room",
    errno.EROFS: "that file system is read-only: point TMPDIR (or the output option) at a writable folder",
    errno.EACCES: "permission denied: point TMPDIR (or the output option) at a folder you may write",
}


def refusal_of(error: BaseException) -> OSError | None:
    """The ``OSError`` behind ``error`` (itself, or its cause/context) that a full or read-only disk raised."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _REFUSALS:
            return current
        current = current.__cause__ or current.__context__
    return None


def environment_message(error: BaseException) -> str:
    """``error``'s text plus what the machine refused and how to fix it (``refusal_of`` must hold).

    A report that could not be written (``reports.atomic.OutputWriteError``) already names its
    path and the fix: its own words, nothing about the temp folder.
    """
    if isinstance(error, OutputWriteError):
        return error.strerror or str(error)
    refusal = refusal_of(error)
    fix = _REFUSALS[refusal.errno] if refusal is not None else "check the environment"
    return (f"{error}; {fix} (the temporary folder is {tempfile.gettempdir()}); "
            "nothing in your project was written")
