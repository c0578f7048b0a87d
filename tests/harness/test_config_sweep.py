"""[tool.seamgate.sweep] is read with the rest of [tool.seamgate], once, into the one typed ``Config``: its
settings are ``Config.sweep``, and a bad sweep table is refused when the project's settings are read, by any
command, naming the file, the key and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import Config, SweepSettings, load_config
from harness.errors import ConfigError


def _pyproject(root: Path, sweep: str) -> Path:
    path = root / "pyproject.toml"
    path.write_text(f"[project]\nname = 'x'\n\n[tool.seamgate]\njobs = 2\n\n[tool.seamgate.sweep]\n{sweep}")
    return path


def test_the_sweep_table_is_part_of_the_projects_settings(tmp_path: Path) -> None:
    path = _pyproject(tmp_path, "paths = ['calc']\ntests = ['tests/unit']\nequivalents = 'eq.yaml'\n")
    assert load_config(tmp_path) == Config(jobs=2, sweep=SweepSettings(paths=("calc",), tests=("tests/unit",),
                                                                      equivalents="eq.yaml"), source=str(path))


def test_without_a_sweep_table_the_sweep_gets_its_defaults(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.seamgate]\njobs = 2\n")
    assert load_config(tmp_path).sweep == SweepSettings() == SweepSettings(paths=("seam",), tests=(), equivalents=None)


@pytest.mark.parametrize(("sweep", "message"), [
    ("pathz = ['x']\n", "[tool.seamgate.sweep]: unknown key(s) pathz; known: paths, tests, equivalents"),
    ("paths = 'calc'\n", "[tool.seamgate.sweep]: 'paths' must be a list of paths, got 'calc'"),
    ("tests = ['']\n", "[tool.seamgate.sweep]: 'tests' must be a list of paths, got ['']"),
    ("equivalents = ''\n", "[tool.seamgate.sweep]: 'equivalents' must be a path, got ''"),
])
def test_a_bad_sweep_table_is_refused_naming_the_file_and_the_key(tmp_path: Path, sweep: str, message: str) -> None:
    path = _pyproject(tmp_path, sweep)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value) == f"{path}: {message}"


def test_a_sweep_that_is_not_a_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.seamgate]\nsweep = 3\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value) == f"{path}: [tool.seamgate] sweep must be a table ([tool.seamgate.sweep])"


def test_every_problem_of_the_settings_is_named_at_once_the_sweep_tables_too(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.seamgate]\njobs = 0\n\n[tool.seamgate.sweep]\npathz = ['x']\ntests = 'unit'\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    lines = str(caught.value).splitlines()
    assert lines == [f"{path}:2: [tool.seamgate]: 'jobs' must be an integer >= 1, got 0",
                     f"{path}: [tool.seamgate.sweep]: unknown key(s) pathz; known: paths, tests, equivalents",
                     f"{path}: [tool.seamgate.sweep]: 'tests' must be a list of paths, got 'unit'"]
