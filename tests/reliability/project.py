"""The reliability corpus's fixture project, and the one helper that proves a run left it alone.

The fixture is the smallest project seamgate can judge: a package ``calc`` with two functions,
three test cases, a ``pyproject.toml`` with ``[tool.seamgate]``, one gate and one named mutation.
Every corpus case writes its bad input on top of it, hashes the tree, runs seamgate, and hashes
it again.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Mapping, Union

#: A file's content: text, or raw bytes (non-UTF-8 inputs).
Content = Union[str, bytes]

#: The runner's own lock folder (``harness/results/lock.py``); the only thing a run may add to the tree.
LOCK_FOLDER = ".seamgate"

GATE_OK = """\
version: 1
gates:
  - id: mul-rule
    kind: rule
    title: "mul-adds reds only the mul test"
    source: {mutation: mul-adds}
    select: [tests]
    expect:
      red: {files: [tests/test_mul.py]}
"""

CATALOG_OK = """\
version: 1
mutations:
  - id: mul-adds
    title: "mul adds instead of multiplying"
    target: calc/ops.py
    replace: {old: "return a * b", new: "return a + b"}
"""

BASE: dict[str, Content] = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n\n[tool.seamgate]\ngates = ["gates"]\njobs = 2\n',
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/__init__.py": "",
    "tests/test_add.py": (
        "from calc.ops import add\n\n\n"
        "def test_add_small():\n    assert add(1, 2) == 3\n\n\n"
        "def test_add_zero():\n    assert add(0, 5) == 5\n"
    ),
    "tests/test_mul.py": "from calc.ops import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    "gates/g.yaml": GATE_OK,
    "mutations/catalog/calc.yaml": CATALOG_OK,
}


def write_project(root: Path, overrides: Mapping[str, Content | None] = {}) -> Path:
    """Write ``BASE`` updated by ``overrides`` (``None`` removes a base file) under ``root``."""
    files = {**BASE, **overrides}
    for rel, content in files.items():
        if content is None:
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def tree_snapshot(root: Path) -> dict[str, str]:
    """Every entry under ``root`` -> a digest of its kind, mode and bytes (or link target).

    Two snapshots are equal only if no file was added, removed, rewritten, re-moded or turned into
    a link. ``.seamgate/`` is left out: it is the runner's documented lock folder
    (``harness/results/lock.py``), the one thing a run may create in a writable project.
    """
    entries: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        if here == root:
            dirnames[:] = [d for d in dirnames if d != LOCK_FOLDER]
        for name in sorted(dirnames + filenames):
            path = here / name
            rel = path.relative_to(root).as_posix()
            info = path.lstat()
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISLNK(info.st_mode):
                entries[rel] = f"link {os.readlink(path)}"
            elif stat.S_ISDIR(info.st_mode):
                entries[rel] = f"dir {mode:o}"
            elif not stat.S_ISREG(info.st_mode):  # a FIFO or device node: never read (a FIFO blocks)
                entries[rel] = f"special {stat.S_IFMT(info.st_mode):o} {mode:o}"
            else:
                entries[rel] = f"file {mode:o} {hashlib.sha256(path.read_bytes()).hexdigest()}"
    return entries


def tree_changes(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """What differs between two snapshots, one line per path (empty: byte-identical)."""
    changes = [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    changes += [f"added {p}" for p in sorted(after.keys() - before.keys())]
    changes += [f"changed {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    return changes
