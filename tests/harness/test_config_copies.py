"""[tool.seamgate] copy_include / copy_exclude (issue 15): lists of relative glob patterns, refused clearly otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import load_config
from harness.errors import ConfigError
from tests.harness.test_config import pyproject


def test_copy_patterns_are_read(tmp_path: Path) -> None:
    pyproject(tmp_path, "copy_include = ['src/pkg/_version.py']\ncopy_exclude = ['data']\n")
    config = load_config(tmp_path)
    assert config.copy_include == ("src/pkg/_version.py",) and config.copy_exclude == ("data",)


@pytest.mark.parametrize("line,fragment", [
    ("copy_include = 'x.py'", "'copy_include' must be a list of paths"),
    ("copy_exclude = ['/abs']", "'copy_exclude' pattern '/abs' must be relative"),
    ("copy_include = ['../up.py']", "without '..'"),
    ("copy_includes = ['x']", "did you mean 'copy_include'"),
])
def test_bad_copy_settings_are_refused_naming_file_line_and_fix(tmp_path: Path, line: str, fragment: str) -> None:
    path = pyproject(tmp_path, line + "\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert fragment in str(caught.value) and f"{path}:5" in str(caught.value)


def test_a_copy_takes_its_rules_from_the_one_reader_of_the_settings(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25: the settings are read in one place (``harness/config.py``); the copy's rules are that reading's."""
    from harness import project_copy
    from harness.config import Config

    pyproject(tmp_path, "copy_include = ['from_the_file.py']\n")
    read: list[Path] = []
    monkeypatch.setattr(project_copy, "load_config", lambda root: read.append(root) or Config(
        copy_include=("from_the_reader.py",), copy_exclude=("data",)), raising=False)
    rules = project_copy.CopyRules.load(tmp_path)
    assert (rules.include, rules.exclude, read) == (("from_the_reader.py",), ("data",), [tmp_path])


def test_a_copy_of_a_project_whose_settings_are_refused_has_no_extra_rules(tmp_path: Path) -> None:
    from harness.project_copy import CopyRules

    pyproject(tmp_path, "copy_include = ['x.py']\njobs = 0\n")
    assert CopyRules.load(tmp_path) == CopyRules()
