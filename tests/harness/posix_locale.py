"""Run Python code in a child under the POSIX locale with locale coercion and UTF-8 mode off, where a file
read without ``encoding=`` is read as ASCII: what a CI runner with ``LC_ALL=C`` and an older Python sees.
The cases that check a reader names UTF-8 (``encoding=None`` mutants) share it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_in_posix_locale(code: str, *args: str) -> str:
    """``code`` run with ``args`` in that child, the repository on its path; its stdout, stripped. A child that
    fails fails the calling case with its stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONUTF8", "PYTHONIOENCODING"))}
    env.update(LC_ALL="C", PYTHONCOERCECLOCALE="0", PYTHONUTF8="0", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()
