"""Import roots of a copy (issue 15): the root, src/, and the package folders pyproject or setup.cfg configure."""

from __future__ import annotations

from pathlib import Path

from harness.rows.import_roots import foreign_imports, import_roots, top_level_names
from tests.reports.fixture_projects import write_project


def rel(tree: Path) -> list[str]:
    return [p.relative_to(tree).as_posix() or "." for p in import_roots(tree)]


def test_src_layout_puts_src_after_the_root(tmp_path: Path) -> None:
    tree = write_project(tmp_path / "t", {"src/pkg/__init__.py": "", "tests/test_x.py": ""})
    assert rel(tree) == [".", "src"]
    assert top_level_names(import_roots(tree)) == ["pkg"]


def test_pyproject_package_dir_and_packages_find_name_their_folders(tmp_path: Path) -> None:
    tree = write_project(tmp_path / "t", {
        "pyproject.toml": "[tool.setuptools]\npackage-dir = {one = 'code/one'}\n"
                          "[tool.setuptools.packages.find]\nwhere = ['libs']\n",
        "code/one/__init__.py": "", "libs/two/__init__.py": "", "libs/three/mod.py": ""})
    assert rel(tree) == [".", "code", "libs"]
    assert top_level_names(import_roots(tree)) == ["one", "three", "two"]


def test_setup_cfg_package_dir_names_its_folder(tmp_path: Path) -> None:
    tree = write_project(tmp_path / "t", {"setup.cfg": "[options]\npackage_dir =\n    =lib\n",
                                          "lib/cfgpkg/__init__.py": ""})
    assert rel(tree) == [".", "lib"]


def test_a_configured_folder_outside_the_tree_is_never_a_root(tmp_path: Path) -> None:
    tree = write_project(tmp_path / "t", {"pyproject.toml": "[tool.setuptools]\npackage-dir = {'' = '../elsewhere'}\n"})
    (tmp_path / "elsewhere").mkdir()
    assert rel(tree) == ["."]


def test_a_project_module_loaded_outside_the_copy_is_named_with_its_path(tmp_path: Path) -> None:
    class Module:
        def __init__(self, file: str) -> None:
            self.__file__ = file

    modules = {"pkg": Module(str(tmp_path / "copy/src/pkg/__init__.py")),
               "pkg.core": Module(str(tmp_path / "orig/src/pkg/core.py")),
               "json": Module("/usr/lib/python3/json/__init__.py")}
    assert foreign_imports(modules, tmp_path / "copy", {"pkg"}) == [
        {"module": "pkg.core", "path": str((tmp_path / "orig/src/pkg/core.py").resolve())}]
