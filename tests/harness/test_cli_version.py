"""`seamgate --version` names the installed distribution's version, as pip knows it, and exits 0."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from harness.cli.main import main


def test_version_prints_the_installed_distributions_version_and_exits_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"seamgate {version('seamgate')}"
