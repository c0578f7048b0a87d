"""Every mutation of the bundled catalog still applies once to today's code and compiles.

A seam edit can silently rot a catalog entry (its anchor text moves to another file); the gate that
uses it then ends ERROR at ``seamgate run``. This test makes the rot red in the suite, by id.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mutations.catalog import catalog_files, load_catalog
from mutations.check import check_mutation
from mutations.model import Mutation

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog(catalog_files([ROOT / "mutations" / "catalog"]), project_root=ROOT)


def test_the_bundled_catalog_is_not_empty() -> None:
    assert len(CATALOG.mutations) >= 40


@pytest.mark.parametrize("mutation", CATALOG.mutations, ids=lambda m: m.id)
def test_a_bundled_mutation_applies_once_and_compiles(mutation: Mutation) -> None:
    if mutation.target.startswith(".subjects/"):
        assert (ROOT / ".subjects").is_dir(), "the subjects are not installed: run scripts/setup.sh (it fills .subjects/)"
    result = check_mutation(ROOT, mutation)
    assert result.ok, f"{mutation.id} ({mutation.target}): {result.status}: {result.problem}"
