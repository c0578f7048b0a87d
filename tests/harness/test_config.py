"""The [tool.seamgate] table: defaults, unknown keys refused by name and file, project discovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import Config, find_project, load_config
from harness.errors import ConfigError


def pyproject(root: Path, table: str) -> Path:
    path = root / "pyproject.toml"
    path.write_text(f"[project]\nname = 'x'\n\n[tool.seamgate]\n{table}")
    return path


def test_a_project_without_the_table_gets_the_defaults(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert load_config(tmp_path) == Config()


def test_the_table_sets_gates_catalog_and_jobs(tmp_path: Path) -> None:
    path = pyproject(tmp_path, "gates = ['gates', 'more']\ncatalog = ['cat']\njobs = 4\n")
    assert load_config(tmp_path) == Config(gates=("gates", "more"), catalog=("cat",), jobs=4, source=str(path))


def test_an_unknown_key_is_refused_naming_the_key_the_file_and_its_line(tmp_path: Path) -> None:
    path = pyproject(tmp_path, "jobs = 2\ngatse = ['gates']\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value) == (f"{path}:6: [tool.seamgate]: unknown key 'gatse' — did you mean 'gates'? "
                                 "(allowed: gates, catalog, jobs, evidence, copy_include, copy_exclude, baseline_timeout, sweep, "
                                 "count_assertions)")


def test_values_of_the_wrong_type_are_refused(tmp_path: Path) -> None:
    pyproject(tmp_path, "gates = 'gates'\njobs = 0\n")
    with pytest.raises(ConfigError, match=r"'gates' must be a list of paths(.|\n)*'jobs' must be an integer >= 1"):
        load_config(tmp_path)


def test_the_project_is_the_nearest_parent_whose_pyproject_has_the_table(tmp_path: Path) -> None:
    pyproject(tmp_path, "")
    (tmp_path / "sub/pkg").mkdir(parents=True)
    (tmp_path / "sub/pyproject.toml").write_text("[project]\nname = 'inner'\n")
    assert find_project(tmp_path / "sub/pkg") == tmp_path.resolve()


def test_without_any_seamgate_pyproject_the_project_is_the_start_folder(tmp_path: Path) -> None:
    assert find_project(tmp_path) == tmp_path.resolve()
