"""ARCHITECTURE.md lists every file of the project in one line, as its own first line states it."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| `([^`]+)` \|")


def _generator():
    spec = importlib.util.spec_from_file_location("architecture_map", ROOT / "scripts" / "architecture_map.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _paths(text: str) -> set[str]:
    return {m.group(1) for line in text.splitlines() if (m := ROW.match(line))}


def test_the_architecture_map_has_a_line_for_every_file_and_none_for_a_gone_one() -> None:
    on_disk = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    wanted = _generator().render()
    missing, gone = sorted(_paths(wanted) - _paths(on_disk)), sorted(_paths(on_disk) - _paths(wanted))
    assert not missing and not gone, f"run scripts/architecture_map.py: missing {missing}, gone {gone}"


def test_every_line_of_the_map_says_what_the_file_says_of_itself() -> None:
    on_disk = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert on_disk == _generator().render(), "ARCHITECTURE.md is stale: run scripts/architecture_map.py"
    assert "UNDESCRIBED" not in on_disk
