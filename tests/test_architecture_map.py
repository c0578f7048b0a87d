"""ARCHITECTURE.md lists every source file of the project in one line, and nothing that is gone."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAPPED = ("seam/", "drivers/", "mutations/", "harness/", "reports/", "bench/", "gates/", "scripts/", "docs/", ".ci/", "evidence/")
ROW = re.compile(r"^\| `([^`]+)` \|")


def mapped_paths() -> set[str]:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    return {m.group(1) for line in text.splitlines() if (m := ROW.match(line))}


def tree_paths() -> set[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    files = {p for p in out.splitlines() if (ROOT / p).exists()}
    wanted = {p for p in files if p.startswith(MAPPED) and not p.endswith("__init__.py")}
    # Test folders are mapped as folders (their files mirror the packages they test).
    wanted |= {str(Path(p).parent) + "/" for p in files if p.startswith("tests/")}
    return wanted


def test_every_source_file_is_in_the_architecture_map() -> None:
    missing = sorted(tree_paths() - mapped_paths())
    assert not missing, f"add a one-line entry to ARCHITECTURE.md for: {missing}"


def test_the_architecture_map_names_no_file_that_is_gone() -> None:
    gone = sorted(p for p in mapped_paths() if not (ROOT / p).exists())
    assert not gone, f"ARCHITECTURE.md names paths that no longer exist: {gone}"
