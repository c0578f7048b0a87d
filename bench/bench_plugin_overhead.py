"""Benchmark: a torch-free project's own pytest in a fresh venv WITH `pip install seamgate` against one without it.

Issue 15: installing seamgate (no torch, no `[seam]` extra) must leave a project's own suite unchanged
in outcome and within 5% in time, and `seamgate run` must work there. Two venvs are built in /tmp
WITHOUT system site packages; both get the same pinned runtime dependencies from the package index
(the versions this interpreter has); one also gets seamgate itself, built from this checkout's HEAD
(``git archive``, ``pip install --no-deps``). The project is ``tests/realworld``'s
flat one (``filterwarnings = error``, no seam test) plus a generated module of ``--cases`` small
tests, so the session has some body. Rounds alternate which venv goes first; each run is a fresh
``python -m pytest -q -p no:cacheprovider`` (the entry point autoloads in the seamgate venv). Prints
both medians of the wall time and of pytest's own "in X s", their ratios, whether the outcomes were
the same, and what ``seamgate run`` said in the seamgate venv.

    .venv/bin/python bench/bench_plugin_overhead.py [--rounds 21] [--cases 300] [--keep DIR]
"""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.realworld.projects import write  # noqa: E402

#: seamgate's runtime dependencies (pyproject ``[project] dependencies``), pinned to this interpreter's versions.
RUNTIME = ("pyyaml", "junitparser", "rich", "pytest", "coverage", "pyflakes")
#: The environment the measured commands see: no caller's PYTEST_*/PYTHON* settings, no seamgate variables.
CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON", "SEAM", "PIP_", "VIRTUAL_ENV"))}


def sh(*args: str | Path, cwd: Path | None = None, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, env=CLEAN, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(map(str, args))}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return done


def base_python() -> str:
    """The interpreter this venv was made from (a venv made from a venv would chain them)."""
    return getattr(sys, "_base_executable", sys.executable)


def make_venv(where: Path, pins: list[str]) -> Path:
    sh(base_python(), "-m", "venv", where)  # --system-site-packages is NOT given: nothing outside is seen
    python = where / "bin" / "python"
    sh(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *pins)
    return python


def install_seamgate(python: Path, work: Path) -> None:
    """seamgate from this checkout's HEAD, without its dependencies (they are pinned already)."""
    archive = subprocess.run(["git", "archive", "--format=tar", "HEAD"], cwd=REPO, capture_output=True, check=True)
    src = work / "seamgate-src"
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(src, filter="data")
    sh(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", src)


def add_cases(project: Path, n: int) -> None:
    body = "import pytest\n\n\n@pytest.mark.parametrize('i', range({n}))\ndef test_many(i):\n    assert i + 1 > i\n"
    (project / "tests" / "test_many.py").write_text(body.format(n=n))


def once(python: Path, project: Path) -> tuple[float, float, int, str]:
    started = time.perf_counter()
    done = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project,
                          capture_output=True, text=True, env=CLEAN)
    wall = time.perf_counter() - started
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    found = re.search(r" in ([0-9.]+)s", last)
    return wall, float(found.group(1)) if found else float("nan"), done.returncode, last.split(" in ")[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--cases", type=int, default=300, help="generated test cases added to the project")
    parser.add_argument("--keep", type=Path, default=None, help="build the venvs here and keep them")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="seamgate-bench-venvs-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        pins = [f"{name}=={metadata.version(name)}" for name in RUNTIME]
        started = time.perf_counter()
        venvs = {"without": make_venv(work / "without", pins), "with": make_venv(work / "with", pins)}
        install_seamgate(venvs["with"], work)
        print(f"venvs built in {time.perf_counter() - started:.0f} s; pins: {' '.join(pins)}")
        for name, python in venvs.items():
            # cwd=work: a checkout's own seamgate.egg-info on the current folder would be seen as installed
            torch = subprocess.run([str(python), "-c", "import torch"], capture_output=True, text=True, env=CLEAN,
                                   cwd=work)
            plugins = sh(python, "-c", "from importlib.metadata import entry_points; "
                                       "print(sorted(e.name for e in entry_points(group='pytest11')))",
                         cwd=work).stdout.strip()
            print(f"  {name}: import torch -> {'fails' if torch.returncode else 'WORKS'}; pytest11 entry points {plugins}")
        project = write(work, "flatpkg")
        add_cases(project, args.cases)
        seamgate = venvs["with"].parent / "seamgate"
        for command in (["--help"], ["validate"]):
            done = subprocess.run([str(seamgate), *command], cwd=project, capture_output=True, text=True, env=CLEAN)
            print(f"seamgate {' '.join(command)}: exit {done.returncode}")
        report = work / "report.json"
        done = subprocess.run([str(seamgate), "run", "--json", str(report)], cwd=project, capture_output=True,
                              text=True, env=CLEAN, timeout=600)
        verdicts = [(o["gate"], o["verdict"]) for o in json.loads(report.read_text())["outcomes"]] if report.is_file() else []
        print(f"seamgate run (torch absent): exit {done.returncode}, {verdicts}")
        walls: dict[str, list[float]] = {"with": [], "without": []}
        sessions: dict[str, list[float]] = {"with": [], "without": []}
        outcomes: dict[str, set[tuple[int, str]]] = {"with": set(), "without": set()}
        for n in range(args.rounds):
            order = ["with", "without"] if n % 2 == 0 else ["without", "with"]
            for name in order:
                wall, session, code, summary = once(venvs[name], project)
                walls[name].append(wall)
                sessions[name].append(session)
                outcomes[name].add((code, summary))
        w, wo = statistics.median(walls["with"]), statistics.median(walls["without"])
        s, so = statistics.median(sessions["with"]), statistics.median(sessions["without"])
        print(f"rounds {args.rounds}, {args.cases + 3} cases: wall with seamgate {w * 1000:.0f} ms, without "
              f"{wo * 1000:.0f} ms (medians), ratio {w / wo:.3f}; pytest's session {s * 1000:.0f} vs {so * 1000:.0f} ms, "
              f"ratio {s / so:.3f}")
        print(f"outcomes with {sorted(outcomes['with'])}, without {sorted(outcomes['without'])}, "
              f"same: {outcomes['with'] == outcomes['without']}")
        return 0 if outcomes["with"] == outcomes["without"] else 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
