"""Whether a project uses torch: then its fork server imports torch, and each run forks a zygote with it.

The fork server imports torch (and ``torch._dynamo``) once so that no run pays it, and each run forks a
zygote (``harness/zygote.py``) that holds torch for the children a test starts. A project that never
imports torch (cachetools, toolz, dateutil: issue 26's real projects) paid the server's import (3.5 s on
this 2-core machine) before its first run and, in EVERY run, a zygote importing torch beside the session
(a core for 2 to 3 s; ``bench/bench_sweep_phases.py`` shows each run's time). ``uses_torch`` says yes when the project names torch in its dependency files
(``pyproject.toml``, ``setup.py``, ``setup.cfg``, ``requirements*.txt``) or imports it in one of its
Python files; a package of torch's family (a name that begins with ``torch`` or ``pytorch``: torchvision,
torchaudio, pytorch-lightning) imports torch itself, so it counts too. A wrong "no" costs speed only (a run
then imports torch itself), never an answer, and so does a wrong "yes"; a project too large to read quickly
counts as a yes (``SCAN_LIMIT``). ``TorchUse`` asks once, and only when a run needs the answer.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

#: Files read at most; past it the project counts as using torch (the safe, slower answer).
SCAN_LIMIT = 5000
#: Folders never read: environments, caches, build output, version control.
SKIPPED = frozenset({".git", ".hg", ".venv", "venv", "env", ".tox", ".nox", "node_modules", "__pycache__",
                     ".seamgate", ".mypy_cache", ".pytest_cache", "build", "dist", "site-packages", "mutants"})
_DEPENDENCY_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
#: torch, or a package of its family, named in a dependency file (not ``blowtorch``, not ``my.torch``).
_NAMED = re.compile(r"(?<![\w.-])(?:py)?torch")
#: ``import torch``, ``from torchvision import ...``, ``import pytorch_lightning``.
_IMPORTED = re.compile(r"^\s*(?:import|from)\s+(?:py)?torch", re.MULTILINE)


def uses_torch(root: Path) -> bool:
    """Whether the project at ``root`` names torch as a dependency or imports it (see the module docstring)."""
    root = Path(root)
    for name in _DEPENDENCY_FILES:
        if _NAMED.search(_read(root / name)):
            return True
    if any(_NAMED.search(_read(path)) for path in root.glob("requirements*.txt")):
        return True
    read = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.endswith(".egg-info"))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            read += 1
            if read > SCAN_LIMIT or _IMPORTED.search(_read(Path(folder) / name)):
                return True
    return False


class TorchUse:
    """``uses_torch(root)``, asked when first wanted (``bool(...)``) and then kept: a sweep that reuses every
    outcome starts no fork server and runs nothing, so it reads none of the project's files for this."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._answer: bool | None = None
        # the sweep's fork server starts in a thread of its own while its first run asks too: one reads
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        with self._lock:
            if self._answer is None:
                self._answer = uses_torch(self.root)
            return self._answer


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
