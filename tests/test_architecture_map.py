"""ARCHITECTURE.md lists every file of the product code in one line, as its own first line states it; data
folders (gates, catalogs, docs, evidence) and test folders are listed as folders, so additions there never
make it stale."""

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


def test_adding_a_gate_a_catalog_entry_a_doc_or_a_test_file_does_not_change_the_map(tmp_path, monkeypatch) -> None:
    generator = _generator()
    before = generator.render()
    extra = ["gates/g9_user.yaml", "mutations/catalog/user.yaml", "docs/user.md", "evidence/user.json",
             "tests/seam/test_user.py"]
    real = generator.files
    monkeypatch.setattr(generator, "files", lambda: sorted(real() + extra))
    monkeypatch.setattr(generator, "first_line", lambda path: "x" if path.name in {Path(e).name for e in extra}
                        else _generator().first_line(path))
    assert generator.render() == before
