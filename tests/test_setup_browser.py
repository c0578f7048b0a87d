"""scripts/setup_browser.sh installs a system package (chromium) only when asked: --with-browser or CI=true."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(tmp_path: Path, *args: str, ci: str | None = None) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """The script with apt-get and sudo replaced by stubs that log their calls, and no chromium."""
    stubs = tmp_path / "bin"
    stubs.mkdir(exist_ok=True)
    log = tmp_path / "calls.log"
    for name in ("apt-get", "sudo"):
        stub = stubs / name
        stub.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\n[ "$1" = -n ] && [ "$2" = true ] && exit 0\n'
                        'if [ "$1" = -n ]; then shift; exec "$@"; fi\nexit 0\n')
        stub.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(PATH=f"{stubs}{os.pathsep}{env['PATH']}", SEAMGATE_CHROMIUM=str(tmp_path / "no-chromium"))
    if ci is not None:
        env["CI"] = ci
    done = subprocess.run(["bash", str(ROOT / "scripts" / "setup_browser.sh"), *args], env=env, capture_output=True,
                          text=True, timeout=60)
    return done, (log.read_text().splitlines() if log.exists() else [])


def test_without_being_asked_it_installs_nothing_and_says_how(tmp_path: Path) -> None:
    done, calls = _run(tmp_path)
    assert done.returncode == 0
    assert calls == []
    assert "bash scripts/setup.sh --with-browser" in done.stdout


@pytest.mark.parametrize("how", ["--with-browser", "CI=true"])
def test_when_asked_it_installs_chromium_with_apt_get(tmp_path: Path, how: str) -> None:
    done, calls = _run(tmp_path, *([how] if how.startswith("--") else []), ci="true" if how == "CI=true" else None)
    assert done.returncode == 0
    assert any(c.startswith("apt-get install") and "chromium" in c for c in calls), calls


def test_ci_set_to_anything_but_true_is_not_asking(tmp_path: Path) -> None:
    _, calls = _run(tmp_path, ci="0")
    assert calls == []
