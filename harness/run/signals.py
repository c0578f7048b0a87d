"""Signals and leftovers of a run: SIGINT/SIGTERM become ``Interrupted``; temp folders of dead runs are swept.

The runner installs the handlers for the length of a run (main thread only) and restores the previous
ones after. A SIGKILL'd runner cannot clean up: its temp folder (named with its pid) is swept by the
next run, once that pid is gone.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile
import threading
from pathlib import Path
from typing import Any

#: The start of a run's temp folder name; the pid of the run follows (``seamgate-run-<pid>-...``).
WORKDIR_PREFIX = "seamgate-run-"


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived; carries the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_interrupted(signum: int, _frame: Any) -> None:
    raise Interrupted(signum)


def install_signal_handlers() -> dict[int, Any]:
    """SIGINT and SIGTERM raise ``Interrupted`` (main thread only); returns the handlers they replace."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, _raise_interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}


def restore_signal_handlers(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def sweep_stale_workdirs(root: Path | None = None) -> list[Path]:
    """Remove temp folders of earlier runs whose process is gone (a SIGKILL leaves them behind)."""
    root = root or Path(tempfile.gettempdir())
    removed = []
    for folder in root.glob(f"{WORKDIR_PREFIX}*-*"):
        match = re.match(rf"{WORKDIR_PREFIX}(\d+)-", folder.name)
        if match and not _alive(int(match.group(1))):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
