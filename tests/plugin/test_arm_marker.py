"""``@pytest.mark.arm(X)``: its help in ``pytest --markers``, and which tests a ``SEAM_ARMS`` leaves to run.

Each case starts a pytest session of its own over a small suite, with the seam's plugin loaded by
name and the installed lazy entry point (``seamgate_plugin``, which stands aside when the seam's
plugin is registered) switched off where it would print a second copy of the marker's help.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELP = ("@pytest.mark.arm(name): the test exercises one platform arm only (deselected when SEAM_ARMS excludes it, "
        "OWED when the hardware is missing)")

# A marked test FIRST (the loop must go on past a deselected test) and one marked with a selected arm.
SUITE = '''
import pytest

@pytest.mark.arm("cuda")
def test_cuda_first():
    pass

@pytest.mark.arm("cpu-emulated")
def test_emulated_only():
    pass

def test_plain():
    pass
'''
# Another plugin's view of the deselection: the node id of every deselected item.
CONFTEST = '''
def pytest_deselected(items):
    print("DESELECTED", *[item.nodeid for item in items])
'''


def _pytest(tmp_path: Path, *args: str, arms: str | None = None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    env = {k: v for k, v in os.environ.items() if k != "SEAM_ARMS"}
    if arms is not None:
        env["SEAM_ARMS"] = arms
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("plugin", ["seam.pytest_plugin", "seamgate_plugin"])
def test_pytest_markers_explains_the_arm_marker_in_the_same_words_from_either_plugin(tmp_path: Path,
                                                                                     plugin: str) -> None:
    # no:seamgate keeps the installed entry point's copy of the help out (it is loaded by name here instead)
    done = _pytest(tmp_path, "-p", "no:seamgate", "-p", plugin, "--markers")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("@pytest.mark.arm")]
    assert lines == [HELP], done.stdout


def test_seam_arms_deselects_only_the_tests_of_other_arms_and_names_them_to_other_plugins(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "-p", "seam.pytest_plugin", "-v", "-s", arms="cpu-emulated")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "test_suite.py::test_emulated_only PASSED" in out
    assert "test_suite.py::test_plain PASSED" in out
    assert "test_cuda_first" not in out.replace("DESELECTED test_suite.py::test_cuda_first", "")
    assert "DESELECTED test_suite.py::test_cuda_first\n" in out
    assert "2 passed, 1 deselected" in out
