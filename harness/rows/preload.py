"""Whether a project uses torch: then its fork server imports torch, and each run forks a zygote with it.

The fork server imports torch (and ``torch._dynamo``) once so that no run pays it, and each run forks a
zygote (``harness/zygote.py``) that holds torch for the children a test starts. A project that never
imports torch (cachetools, toolz, dateutil: issue 26's real projects) paid the server's import (3.5 s on
this 2-core machine) before its first run and, in EVERY run, a zygote importing torch beside the session
(a core for 2 to 3 s; ``bench/bench_sweep_phases.py`` shows each run's time). ``uses_torch`` says yes when the project names torch in its dependency files
(``pyproject.toml``, ``setup.py``, ``setup.cfg``, ``requirements*.txt``) or imports it in one of its
Python files. A wrong "no" costs speed only (a run then imports torch itself), never an answer; a
project too large to read quickly counts as a yes (``SCAN_LIMIT``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: Files read at most; past it the project counts as using torch (the safe, slower answer).
SCAN_LIMIT = 5000
#: Folders never read: environments, caches, build output, version control.
SKIPPED = frozenset({".git", ".hg", ".venv", "venv", "env", ".tox", ".nox", "node_modules", "__pycache__",
                     ".seamgate", ".mypy_cache", ".pytest_cache", "build", "dist", "site-packages", "mutants"})
_DEPENDENCY_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
_NAMED = re.compile(r"(?<![\w.-])torch(?![\w-])")
_IMPORTED = re.compile(r"^\s*(?:import\s+torch\b|from\s+torch\b)", re.MULTILINE)


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


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
