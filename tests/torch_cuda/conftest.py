"""Every test here runs inside ``emulate_cuda()`` (the fixture ``emulated``), on a fresh device.

A module marked ``own_process`` (tests of the caching allocator's own figures and words) runs its ``cuda`` cases in
a fresh interpreter of its own, one per module, and each case takes the outcome its node had there. Why: on a GPU
the caching allocator is the process's, and raw torch (2.11) leaves it counting a capture underway for the rest of
the process once CUDA refuses a capture's end (an unjoined fork: ``docs/torch-cuda.md``, known gaps), which this
suite's own raw ``torch.cuda`` tests and the real subjects' tests do on purpose; after that, ``empty_cache()``
releases nothing, an out-of-memory message names memory "allocated in private pools", and a memory snapshot has
crashed the process (H200, session 16: the cuda arm in file order drivers, fidelity, seam, subjects, torch_cuda; the
first such state came from the seam's own CudaBackend, fixed in 0794eb4, but raw torch's refusals leak it as torch
does). The emulated arm runs in this process (its device is made fresh for each test).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from harness.zygote import run_python
from reports.junit_in import SideFile, read_cases
from seam.torch_cuda import emulate_cuda

ROOT = Path(__file__).resolve().parents[2]
#: Set in the child a module's cases run in: there they run as written.
OWN = "SEAMGATE_OWN_PROCESS"
#: The arms whose cases run in a process of their own, comma-separated (default: cuda; the mechanism's own test
#: names cpu-emulated, where a planted module's cases can run on any machine).
ARMS = "SEAMGATE_OWN_PROCESS_ARMS"
#: Per (module file, arm): node id -> (kind, message) of its cases of that arm in their own process.
_RESULTS: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "own_process: on the cuda arm, the module's cases run in a fresh interpreter "
                                       "of their own (tests/torch_cuda/conftest.py)")


@pytest.fixture
def emulated() -> Iterator[None]:
    with emulate_cuda():
        yield


def _run_module(path: Path, arm: str) -> dict[str, tuple[str, str]]:
    """The module's cases of ``arm`` run alone in a fresh interpreter: node id -> (kind, message), as the harness
    reads a JUnit report (``reports.junit_in.read_cases``: an xfail, an OWED skip, a nameless entry)."""
    relative = path.relative_to(ROOT).as_posix()
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "junit.xml"
        # not emulated as a whole (the emulated arm's fixture emulates each case): SEAM_EMULATE_CUDA=0 also where
        # this process is inside an emulated case's block
        env = {**os.environ, OWN: "1", "SEAM_ARMS": arm, "SEAM_EMULATE_CUDA": "0",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
        done = run_python(["-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", relative],
                          env=env, cwd=ROOT, timeout=600)
        cases = read_cases(report, SideFile.read(Path(scratch) / "no-side-file.json"))
        if cases is None:
            raise AssertionError(f"{relative} in its own process wrote no report (exit {done.returncode}):\n"
                                 f"{(done.stdout or '')[-3000:]}{(done.stderr or '')[-2000:]}")
        return {case.nodeid: (case.kind, case.message) for case in cases}


def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Any:
    """A case of an ``own_process`` module on an arm of ``ARMS`` (cuda): its outcome is the one it had in the module's
    own process."""
    if pyfuncitem.get_closest_marker("own_process") is None or os.environ.get(OWN) == "1":
        return None
    callspec = getattr(pyfuncitem, "callspec", None)
    arm = None if callspec is None else callspec.params.get("torch_cuda")
    if arm not in os.environ.get(ARMS, "cuda").split(","):
        return None
    path = Path(str(pyfuncitem.path)).resolve()
    results = _RESULTS.get((str(path), arm))
    if results is None:
        results = _RESULTS[(str(path), arm)] = _run_module(path, arm)
    kind, message = results.get(pyfuncitem.nodeid, ("missing", "the case did not run in the module's own process"))
    if kind in ("passed", "xpassed"):
        return True
    if kind in ("skipped", "owed"):
        pytest.skip(f"{message} (in its own process)")  # an OWED reason stays first: the case stays OWED
    if kind == "xfailed":
        pytest.xfail(f"{message} (in its own process)")
    raise AssertionError(f"in its own process ({kind}): {message}")
