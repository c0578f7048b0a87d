"""Compare two runs of a JSON-lines probe (``scripts/sync_debug_probe.py``, ``scripts/mixed_devices_probe.py``): case by
case, every field equal, except a ``warnings`` list, compared by whether it is empty (a GPU may warn more than once).

    python scripts/compare_probe_lines.py GPU.jsonl EMULATED.jsonl

Prints each case that differs, then "N of M cases the same" over the cases both runs have, and the cases only one
has. Exit 0 when every shared case is the same, 1 otherwise, 2 on bad usage.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _cases(path: Path) -> dict[str, dict]:
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return {row["case"]: row for row in rows if "case" in row}


def _key(row: dict) -> dict:
    return {k: (bool(v) if k == "warnings" else v) for k, v in row.items()}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    first, second = (_cases(Path(a)) for a in argv)
    shared = [name for name in first if name in second]
    differing = [name for name in shared if _key(first[name]) != _key(second[name])]
    for name in differing:
        print(f"{name}\n  {argv[0]}: {json.dumps(first[name])[:240]}\n  {argv[1]}: {json.dumps(second[name])[:240]}")
    print(f"{len(shared) - len(differing)} of {len(shared)} cases the same")
    for path, own, other in ((argv[0], first, second), (argv[1], second, first)):
        only = [name for name in own if name not in other]
        if only:
            print(f"only in {path}: {', '.join(only)}")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
