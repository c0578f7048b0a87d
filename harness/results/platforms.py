"""Platform arms: which arms can run on this machine, and the provenance of a measured arm.

The probe imports torch, so it runs in a CHILD process (a fork-server child costs milliseconds);
the runner process itself never imports torch. An arm that cannot run here is OWED with the reason
it needs; a measured arm carries a ``Provenance`` (device, capability, driver, torch, commit, code
hash) that turns STALE when the code under test changes.

The code under test, for a start, is every tracked ``.py`` file under ``seam/`` and ``drivers/``
(all tracked ``.py`` files outside ``tests/`` when the project has neither folder).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from seam.arms import NO_BACKEND
from harness.results.evidence import EmptyHashError
from reports.outcome import Provenance, Verdict, code_hash

#: Folders whose Python files are "the code under test" for the provenance hash.
CODE_ROOTS: tuple[str, ...] = ("seam", "drivers")


def probe(_arg: Any = None) -> dict[str, Any]:
    """Runs in a child: what torch sees here (CPU always; CUDA/ROCm with capability and driver)."""
    import torch

    facts: dict[str, Any] = {"torch": torch.__version__, "cuda": False, "hip": bool(torch.version.hip)}
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability(0)
        facts.update(cuda=True, device=torch.cuda.get_device_name(0), capability=f"{major}.{minor}",
                     driver=_driver_version())
    return facts


def _driver_version() -> str:
    """nvidia-smi's first line; "" when it is missing, fails, is silent or hangs (given up after 10 s)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else ""


@dataclass(frozen=True)
class Platform:
    """What this machine offers, as the probe reported it."""

    #: The probe's facts (torch version, cuda, device, capability, driver).
    facts: Mapping[str, Any] = field(default_factory=dict)
    #: Why the probe itself failed (every GPU arm is then OWED with this reason).
    probe_error: str = ""

    def unavailable(self, arm: str) -> str | None:
        """Why ``arm`` cannot run here, stated as what it needs; ``None`` when it can."""
        if arm == "cpu-emulated":
            return None
        if arm in NO_BACKEND:  # no machine can run it, whatever its hardware (``seam/arms.py``)
            return f"OWED: {NO_BACKEND[arm]}"
        if self.probe_error:
            return f"OWED: {arm} arm: the platform probe failed ({self.probe_error})"
        if arm == "cuda" and not (self.facts.get("cuda") and not self.facts.get("hip")):
            return "OWED: cuda arm needs an NVIDIA GPU with a CUDA build of torch (torch.cuda.is_available() is False)"
        if arm == "rocm" and not (self.facts.get("cuda") and self.facts.get("hip")):
            return "OWED: rocm arm needs an AMD GPU with a ROCm build of torch"
        return None

    def unavailable_arms(self, arms: tuple[str, ...]) -> dict[str, str]:
        return {arm: why for arm in arms if (why := self.unavailable(arm)) is not None}

    def provenance(self, arm: str, project_root: Path, *, code_hash: str | None = None,
                   commit: str | None = None, hashed_files: tuple[str, ...] | None = None) -> Provenance:
        """Where ``arm`` was measured; ``code_hash``/``commit`` when the caller already read them, with the
        files that hash read in full (``hashed_files``)."""
        gpu = arm in ("cuda", "rocm")
        return Provenance(
            arm=arm, device=str(self.facts.get("device", "")) if gpu else "cpu",
            capability=str(self.facts.get("capability", "")) if gpu else "",
            driver=str(self.facts.get("driver", "")) if gpu else "",
            torch=str(self.facts.get("torch", "")),
            commit=git_commit(project_root) if commit is None else commit,
            code_hash=hash_code_under_test(project_root) if code_hash is None else code_hash,
            hashed_files=hashed_files,
        )


def git_commit(project_root: Path) -> str:
    """``SEAMGATE_COMMIT`` when set (a copied tree on a GPU machine, whose git metadata may be of
    another commit), else ``git rev-parse HEAD``."""
    if os.environ.get("SEAMGATE_COMMIT"):
        return os.environ["SEAMGATE_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project_root, capture_output=True, text=True)
    except OSError:
        out = None
    if out is not None and out.returncode == 0:
        return out.stdout.strip()
    return os.environ.get("SEAMGATE_COMMIT", "")


def code_under_test(project_root: Path) -> list[str]:
    """The ``.py`` files under ``CODE_ROOTS``, found by WALKING the tree (else the tracked ``.py`` files
    outside tests/). Not git's list: a GPU machine's copy can carry git metadata of another commit
    (the H200 copy of 8ab17df answered 705ac52's file list), and the hash must cover the same files on
    both sides."""
    chosen = sorted(p.relative_to(project_root).as_posix() for root in CODE_ROOTS if (project_root / root).is_dir()
                    for p in (project_root / root).rglob("*.py")
                    if "__pycache__" not in p.parts and not any(part.startswith(".") for part in p.relative_to(project_root).parts))
    return chosen or [f for f in _tracked_py(project_root) if not f.startswith("tests/")]


def _tracked_py(project_root: Path) -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", "*.py"], cwd=project_root, capture_output=True)
    except OSError:
        out = None
    listed = []
    if out is not None and out.returncode == 0:
        listed = sorted(n for n in out.stdout.decode().split("\0") if n and (project_root / n).is_file())
    if listed:
        return listed
    # Not a git checkout of its own (a copied tree on a GPU machine; the H200 runs of 2026-11-29
    # hashed an EMPTY file list here): walk the tree instead.
    return sorted(p.relative_to(project_root).as_posix() for p in project_root.rglob("*.py")
                  if not any(part.startswith(".") for part in p.relative_to(project_root).parts))


def hash_code_under_test(project_root: Path) -> str:
    files = code_under_test(project_root)
    if not files:
        raise EmptyHashError(f"{project_root}: no code under test found (no .py file under {', '.join(CODE_ROOTS)} "
                             "nor outside tests/): a hash over zero files names nothing")
    return code_hash(project_root, files)


def freshness(record: Provenance, project_root: Path) -> Verdict | None:
    """STALE when ``record`` measured different code than the project holds now, else ``None``."""
    return Verdict.STALE if record.stale_against(hash_code_under_test(project_root)) else None
