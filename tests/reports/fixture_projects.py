"""Tiny fixture projects for the harness tests: a package with a couple of functions and tests."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Mapping

from harness.gates.model import Counts, Expectation, Gate, Origin, RedSet, SourceState
from mutations.model import Catalog, Location, Mutation

CALC = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/__init__.py": "",
    "tests/test_add.py": (
        "from calc.ops import add\n\n\n"
        "def test_add_small():\n    assert add(1, 2) == 3\n\n\n"
        "def test_add_zero():\n    assert add(0, 5) == 5\n    assert add(5, 0) == 5\n"
    ),
    "tests/test_mul.py": "from calc.ops import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
}


def write_project(root: Path, files: Mapping[str, str] = CALC) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def mutation(id: str, anchor: str, text: str, target: str = "calc/ops.py") -> Mutation:
    return Mutation(id=id, title=id, target=target, op="replace", location=Location("test"), anchor=anchor, text=text)


def catalog(*mutations: Mutation) -> Catalog:
    return Catalog(mutations=tuple(mutations))


def gate(id: str, *, mutation: str | None = None, select: tuple[str, ...] = ("tests",),
         red: RedSet = RedSet(count=0), counts: Counts | None = None, kind: str = "rule",
         arms: tuple[str, ...] = ("cpu-emulated",), timeout: float | None = None,
         source: SourceState | None = None, green_after: bool = False, env: Mapping[str, str] | None = None) -> Gate:
    state = source or (SourceState(kind="mutation", mutation=mutation) if mutation else SourceState())
    return Gate(id=id, kind=kind, title=id, origin=Origin("test.yaml"), source=state, select=select,
                arms=arms, timeout=timeout, env=dict(env or {}),
                expect=Expectation(red=red, counts=counts, green_after=green_after))


def tree_digest(root: Path) -> str:
    """sha256 over every file's path and bytes (``.seamgate/`` excluded: the runner's own lock)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink()):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".seamgate/"):
            continue
        digest.update(rel.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"link") + b"\0")
    return digest.hexdigest()


def git(root: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(root)}
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env).stdout


_SERVER = None


def shared_server():
    """One fork server for the whole test process (starting one costs ~2 s: torch and pytest)."""
    global _SERVER
    if _SERVER is None:
        import atexit

        from harness.rows.forkserver import ForkServer

        _SERVER = ForkServer().start()
        atexit.register(_SERVER.close)
    return _SERVER


def sweep_calc(root: Path, **options):
    """``seamgate sweep`` of ``root``'s ``calc/`` package, one job, no progress, on the shared fork server:
    the ``SweepResult``. ``options``: more ``SweepOptions`` fields (``arm=...``)."""
    from harness.sweep.sweep import Sweep, SweepOptions

    return Sweep(root, SweepOptions(paths=(str(root / "calc"),), jobs=1, progress="off", **options),
                 launcher=shared_server()).run()


def run_quietly(project: Path, gates, mutations: Catalog, **options):
    """``run_gates`` on a fixture project with the shared fork server, no progress and its terminal
    report captured: ``(report, exit code, what it printed)``."""
    import io

    from harness.run.runner import RunOptions, catalog_materializer, run_gates

    out = io.StringIO()
    report, code = run_gates(list(gates), project=project, options=RunOptions(progress=False, **options),
                             materializer=catalog_materializer(mutations), stdout=out, launcher=shared_server())
    return report, code, out.getvalue()
