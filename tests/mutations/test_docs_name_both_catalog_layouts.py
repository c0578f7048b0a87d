"""docs/mutations.md names both catalog layouts the code reads: the default `mutations/catalog/*.yaml` (this repo,
a project with no `catalog` key) and `mutations/*.yaml`, where `seamgate init` writes (issue 27, item 8)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from harness.cli.scaffold import CATALOG_FILE, TEMPLATES
from harness.config import Config

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "mutations.md"


def test_docs_mutations_md_opens_with_both_the_default_and_the_init_catalog_layouts():
    default = Config().catalog
    written = tuple(tomllib.loads((TEMPLATES / "seamgate_table.toml").read_text())["tool"]["seamgate"]["catalog"])
    if default == written or Path(CATALOG_FILE).parent.as_posix() not in written:
        raise AssertionError(f"this test assumes two layouts (default {default}, init's {written}); rewrite it")
    opening = DOC.read_text(encoding="utf-8").split("\n## ", 1)[0]
    for folder in (*default, *written):
        assert f"`{folder}/*.yaml`" in opening, (
            f"{DOC}'s opening must name `{folder}/*.yaml` (the default catalog is {list(default)}; "
            f"`seamgate init` writes catalog = {list(written)})")
    assert f'catalog = {list(written)}'.replace("'", '"') in opening
