"""`pip install seamgate` without torch: the installed CLI's --help, validate and run work on a torch-free project.

The venv sees this interpreter's packages (pytest, pyyaml, ...: offline, ``projects.make_venv``) with
``import torch`` made to fail, and gets seamgate itself as a REAL, non-editable install of a wheel
built from this checkout's HEAD (so package data and the ``seamgate``/``pytest11`` entry points are
what a user's ``pip install`` gets, and nothing is read from the checkout). The timed comparison of
the project's own pytest with and without seamgate, in two venvs built from the package index, is
``bench/bench_plugin_overhead.py`` (docs/benchmarks.md).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.realworld.projects import RED, make_venv, write

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PYTEST_", "SEAM", "PYTHON", "PIP_", "VIRTUAL_ENV"))}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A torch-free venv with seamgate installed from a wheel of HEAD; returns its ``bin`` folder."""
    root = tmp_path_factory.mktemp("fresh")
    archive = subprocess.run(["git", "archive", "--format=tar", "HEAD"], cwd=REPO, capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(root / "src", filter="data")
    wheels = root / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                    "-w", str(wheels), str(root / "src")], check=True, capture_output=True, env=clean_env(), timeout=300)
    [wheel] = wheels.glob("seamgate-*.whl")
    python = make_venv(root / "v", without_torch=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True, env=clean_env(), timeout=300)
    return python.parent


def test_the_installed_seamgate_is_the_wheels_and_torch_is_absent(installed: Path, tmp_path: Path) -> None:
    probe = subprocess.run([str(installed / "python"), "-c", "import harness, seamgate_plugin; print(harness.__file__)\n"
                            "try:\n    import torch\nexcept ImportError as e:\n    print('no torch:', e)"],
                           cwd=tmp_path, capture_output=True, text=True, env=clean_env())
    assert probe.returncode == 0, probe.stderr
    where, torch = probe.stdout.splitlines()
    assert Path(where).is_relative_to(installed.parent) and not Path(where).is_relative_to(REPO), where
    assert torch == "no torch: No module named 'torch'"


def test_the_wheel_installs_every_package_of_ours(installed: Path, tmp_path: Path) -> None:
    """A sub-package missing from pyproject's package list is absent from a user's install (``seam.torch_cuda``,
    the emulator of torch.cuda, once was): every tracked folder of ours with an ``__init__.py`` is installed."""
    tracked = subprocess.run(["git", "ls-files", "*/__init__.py"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    ours = sorted(str(Path(p).parent).replace("/", ".") for p in tracked
                  if p.split("/")[0] in ("seam", "drivers", "mutations", "reports", "harness"))
    assert "seam.torch_cuda" in ours  # the premise: the list reaches sub-packages
    # read from the install's folder, not imported: the venv has no torch, and seam's packages import it
    purelib = subprocess.run([str(installed / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             cwd=tmp_path, capture_output=True, text=True, env=clean_env(), check=True).stdout.strip()
    missing = [name for name in ours if not (Path(purelib) / name.replace(".", "/") / "__init__.py").is_file()]
    assert missing == [], f"packages of ours the wheel does not install: {missing}"


def test_the_wheel_installs_every_file_of_ours(installed: Path, tmp_path: Path) -> None:
    """A file of a folder that is no package is left out of a wheel unless package data names it: the emulator's
    start-up hook (``seam/torch_cuda/autostart/sitecustomize.py``) once was, so a child of ``emulate_cuda()`` in a
    user's pip install ran on the real torch.cuda. Every tracked file under our packages is installed."""
    tracked = subprocess.run(["git", "ls-files", "seam", "drivers", "mutations", "reports", "harness"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout.split()
    assert "seam/torch_cuda/autostart/sitecustomize.py" in tracked  # the premise
    purelib = subprocess.run([str(installed / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             cwd=tmp_path, capture_output=True, text=True, env=clean_env(), check=True).stdout.strip()
    missing = [name for name in tracked if not (Path(purelib) / name).is_file()]
    assert missing == [], f"files of ours the wheel does not install: {missing}"
    assert os.access(Path(purelib) / "seam/torch_cuda/bin/nvidia-smi", os.X_OK)  # a program on PATH, as in git


def test_help_validate_and_run_work_without_torch_on_a_project_with_no_seam_tests(installed: Path, tmp_path: Path) -> None:
    project = write(tmp_path, "flatpkg")
    seamgate = str(installed / "seamgate")
    helped = subprocess.run([seamgate, "--help"], cwd=project, capture_output=True, text=True, env=clean_env())
    assert helped.returncode == 0 and "validate" in helped.stdout and "Traceback" not in helped.stderr, helped.stderr
    valid = subprocess.run([seamgate, "validate"], cwd=project, capture_output=True, text=True, env=clean_env())
    assert valid.returncode == 0 and valid.stdout.startswith("OK: 1 gate"), valid.stdout + valid.stderr
    report = tmp_path / "report.json"
    ran = subprocess.run([seamgate, "run", "--json", str(report)], cwd=project, capture_output=True, text=True,
                         env=clean_env(), timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    [outcome] = json.loads(report.read_text())["outcomes"]
    red = sorted(c["nodeid"] for c in outcome["runs"][0]["cases"] if c["kind"] == "failed")
    assert (outcome["verdict"], red) == ("PASS", RED), ran.stdout
    own = subprocess.run([str(installed / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project,
                         capture_output=True, text=True, env=clean_env(), timeout=120)
    assert own.returncode == 0 and "3 passed" in own.stdout, own.stdout + own.stderr
