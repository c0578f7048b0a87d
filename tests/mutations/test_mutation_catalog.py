"""Loading the mutation catalog: every malformed entry is refused with file:line:col, key and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutations.catalog import load_catalog
from mutations.errors import MutationCatalogError


def write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def load(tmp_path: Path, catalog: str, extra: dict[str, str] | None = None):
    write_tree(tmp_path, {"seam/scope.py": "x = 1\n", "mutations/catalog/core.yaml": catalog, **(extra or {})})
    return load_catalog([tmp_path / "mutations/catalog"], project_root=tmp_path)


def problems(tmp_path: Path, catalog: str, extra: dict[str, str] | None = None) -> str:
    with pytest.raises(MutationCatalogError) as caught:
        load(tmp_path, catalog, extra)
    return str(caught.value)


ENTRY = "version: 1\nmutations:\n  - id: m1\n    title: t\n    target: seam/scope.py\n"


def test_each_operation_kind_loads_into_a_mutation_with_its_location(tmp_path: Path) -> None:
    catalog = load(tmp_path, (
        "version: 1\nmutations:\n"
        "  - {id: a, title: t, target: seam/scope.py, delete: 'x = 1\\n'}\n"
        "  - {id: b, title: t, target: seam/scope.py, replace: {old: '1', new: '2'}, occurrence: 1}\n"
        "  - {id: c, title: t, target: seam/scope.py, insert-before: {anchor: x, text: 'y = 0\\n'}}\n"
        "  - {id: d, title: t, target: seam/scope.py, insert-after: {anchor: 'x = 1\\n', text: 'y = 0\\n'}}\n"
        "  - {id: e, title: t, target: seam/scope.py, patch: e.diff}\n"
    ), {"mutations/catalog/e.diff": "--- a/seam/scope.py\n+++ b/seam/scope.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"})
    assert [m.op for m in catalog] == ["delete", "replace", "insert-before", "insert-after", "patch"]
    assert catalog.get("b").anchor == "1" and catalog.get("b").text == "2" and catalog.get("b").occurrence == 1
    assert str(catalog.get("c").location) == "mutations/catalog/core.yaml:5:5"
    assert catalog.get("e").patch_file == "e.diff" and "+x = 2" in (catalog.get("e").patch or "")


def test_an_unknown_key_is_named_with_its_position_and_a_suggestion(tmp_path: Path) -> None:
    message = problems(tmp_path, ENTRY + "    delete: x\n    ocurrence: 2\n")
    assert "mutations/catalog/core.yaml:7:5: mutation 'm1': unknown key 'ocurrence' — did you mean 'occurrence'?" in message


def test_no_operation_and_two_operations_are_both_refused(tmp_path: Path) -> None:
    message = problems(tmp_path, ENTRY + "  - {id: m2, title: t, target: seam/scope.py, delete: x, patch: p.diff}\n")
    assert "mutation 'm1': no operation; add exactly one of delete" in message
    assert "mutation 'm2': 2 operations (delete, patch); keep exactly one" in message


@pytest.mark.parametrize("target, fragment", [
    ("../outside.py", "leaves the project"),
    ("/etc/passwd.py", "is absolute"),
    ("seam/notes.txt", "is not a .py file"),
])
def test_a_target_outside_the_project_or_not_python_is_refused(tmp_path: Path, target: str, fragment: str) -> None:
    message = problems(tmp_path, f"version: 1\nmutations:\n  - {{id: m, title: t, target: '{target}', delete: x}}\n")
    assert "core.yaml:3:31: mutation 'm': target " in message and fragment in message


def test_a_target_symlinked_out_of_the_project_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "real.py").write_text("x = 1\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "link.py").symlink_to(outside / "real.py")
    message = problems(project, "version: 1\nmutations:\n  - {id: m, title: t, target: link.py, delete: x}\n")
    assert "outside the project" in message


def test_ids_are_unique_across_catalog_files_and_both_places_are_named(tmp_path: Path) -> None:
    message = problems(tmp_path, ENTRY + "    delete: x\n", {
        "mutations/catalog/more.yaml": "version: 1\nmutations:\n  - {id: m1, title: t, target: seam/scope.py, delete: x}\n",
    })
    assert "more.yaml:3:5: mutation 'm1': id already used at mutations/catalog/core.yaml:3:5" in message


def test_a_bad_id_a_missing_title_and_a_bad_occurrence_are_reported_together(tmp_path: Path) -> None:
    message = problems(tmp_path, "version: 1\nmutations:\n"
                                 "  - {id: Bad_Id, title: t, target: seam/scope.py, delete: x}\n"
                                 "  - {id: m2, target: seam/scope.py, delete: x}\n"
                                 "  - {id: m3, title: t, target: seam/scope.py, delete: x, occurrence: 0}\n")
    assert message.startswith("3 problems in the mutation catalog")
    assert "'id' value 'Bad_Id' does not match" in message
    assert "mutation 'm2': missing required key 'title'" in message
    assert "'occurrence' must be >= 1, got 0" in message


def test_a_patch_file_that_is_missing_or_malformed_or_for_another_file_is_refused(tmp_path: Path) -> None:
    message = problems(tmp_path, "version: 1\nmutations:\n"
                                 "  - {id: a, title: t, target: seam/scope.py, patch: gone.diff}\n"
                                 "  - {id: b, title: t, target: seam/scope.py, patch: bad.diff}\n"
                                 "  - {id: c, title: t, target: seam/scope.py, patch: other.diff}\n", {
        "mutations/catalog/bad.diff": "not a diff\n",
        "mutations/catalog/other.diff": "--- a/seam/x.py\n+++ b/seam/x.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
    })
    assert "patch file 'gone.diff' not found next to the catalog" in message
    assert "mutation 'b': patch bad.diff is not a unified diff" in message
    assert "the patch changes 'seam/x.py' but the target is 'seam/scope.py'" in message


def test_duplicate_yaml_keys_in_an_entry_are_refused(tmp_path: Path) -> None:
    message = problems(tmp_path, ENTRY + "    delete: x\n    delete: y\n")
    assert "core.yaml:7:5: duplicate key 'delete' (first at line 6, column 5)" in message
