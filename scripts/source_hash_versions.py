"""Print one digest of every project ``.py`` file's evidence readings, to compare across Python versions.

Evidence is hashed on the GPU machine (Python 3.12) and checked here (3.11): the readings of
``harness/results/source_hash.py`` must be the same bytes under both. Run it under each interpreter
and compare the last column::

    for py in python3.11 python3.12 python3.13; do $py scripts/source_hash_versions.py; done

It loads ``source_hash.py`` by path, so it needs no install (only the standard library).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    spec = importlib.util.spec_from_file_location("source_hash", ROOT / "harness/results/source_hash.py")
    if spec is None or spec.loader is None:
        raise SystemExit("harness/results/source_hash.py: cannot be loaded")
    readings = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(readings)
    digest, count = hashlib.sha256(), 0
    for path in sorted(ROOT.glob("**/*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(ROOT).parts):
            continue
        data = path.read_bytes()
        digest.update(rel.encode() + b"\0" + readings.normalized(rel, data) + b"\0" + readings.skeleton(rel, data) + b"\0")
        count += 1
    print(f"python {sys.version.split()[0]}: {count} files, readings {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
