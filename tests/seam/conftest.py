"""Shared pieces of the seam suite: a child-process runner and fresh counters for every test."""

from __future__ import annotations

import gc
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import torch

from harness.zygote import run_python
from seam import Backend, BreakableGraph, CaptureMode, EmulatedBackend, GraphCaptureScope
from seam.torch_cuda import child_environment, is_emulating

ROOT = Path(__file__).resolve().parents[2]


#: Captures CUDA refuses at their end, as child-process code over ``backend`` (a ``CudaBackend``), ``q``, ``side``
#: and ``x``: the seam tests of what such a refusal leaves behind run each in a fresh child.
REFUSED_ENDS = {
    # Through GraphCaptureScope (its BreakableGraph gives every segment a pool).
    "scope": """
with pytest.raises(UnjoinedForkError):
    with GraphCaptureScope(backend, q, BreakableGraph(backend, CaptureMode.FULL)):
        backend.wait_event(side, backend.record_event(q))
        with backend.use_queue(side):
            x.add_(1)
        backend.wait_event(q, backend.record_event(side))
        with backend.use_queue(side):
            x.add_(1)  # after the join: the side stream is forked again, and never joined
""",
    # A bare begin_capture with no pool, invalidated and then refused at its end (H200, session 16: the first state
    # after which empty_cache released nothing was tests/seam's invalidated-capture test, which captures so).
    "begin-without-a-pool": """
backend.begin_capture(q)
try:
    with backend.use_queue(q):
        with pytest.raises(CaptureSyncError):
            backend.synchronize()
        backend.wait_event(side, backend.record_event(q))
    with backend.use_queue(side), torch.no_grad():
        x.add_(1)  # forked work, never joined back
    with pytest.raises(CaptureInvalidatedError):
        backend.end_capture(q)
finally:
    backend.abort_capture(q)
""",
}



def refused_then(refused: str, then: str) -> str:
    """Child-process code: a ``CudaBackend`` with ``x``, ``q`` and ``side``, the capture end ``refused`` (one of
    ``REFUSED_ENDS``), then ``then``."""
    return f"""
import json, pytest, torch
from seam import (BreakableGraph, CaptureInvalidatedError, CaptureMode, CaptureSyncError, CudaBackend,
                  GraphCaptureScope, UnjoinedForkError)

backend = CudaBackend()
x = backend.to_device(torch.zeros(1))
q, side = backend.default_queue(), backend.new_queue()
{refused}
{then}"""

def run_child(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (switches are read once per process); in a seamgate run,
    one forked from the run's zygote, with torch already loaded (``harness/zygote.py``). Inside
    ``emulate_cuda()`` the child runs emulated too (``child_environment``)."""
    full_env = child_environment({**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    return run_python(["-c", textwrap.dedent(code)], env=full_env, timeout=120)


def skip_a_second_emulator(case: str) -> None:
    """Skip ``case``, a case of the ``EmulatedBackend``'s own host-read guard on ``Tensor.tolist``, where
    the whole process runs inside ``emulate_cuda()`` (``SEAM_EMULATE_CUDA=1``, the One seam run).

    There two emulators hold the process at once: the emulation's ``Tensor.tolist`` replaces torch's,
    and the ``EmulatedBackend``'s guard (``seam/capture_guard.py`` ``_HOST_READS``) knows torch's, so it
    never sees the read. The case is the emulator's own and runs in every session that is not
    emulated; the refusal of ``tolist`` on the ``cpu-emulated`` arm's ``CudaBackend`` is
    ``tests/seam/test_capture_guard_behaviour.py``'s."""
    if is_emulating():
        pytest.skip(f"{case}: an EmulatedBackend inside emulate_cuda() is two emulators at once (the emulation's "
                    "Tensor.tolist is not the one the EmulatedBackend's host-read guard knows); run without "
                    "SEAM_EMULATE_CUDA=1")


def capture_full(backend: Backend, body: Callable[[], Any]) -> tuple[BreakableGraph, Any]:
    """Capture ``body()`` as one FULL graph on ``backend``'s default queue, without autograd; the
    graph and what ``body`` returned."""
    g = BreakableGraph(backend, CaptureMode.FULL)
    with torch.no_grad(), GraphCaptureScope(backend, backend.default_queue(), g):
        out = body()
    return g, out


@pytest.fixture
def emu() -> EmulatedBackend:
    """The CPU emulator, for the cases that are about the emulator itself."""
    return EmulatedBackend()


@pytest.fixture
def no_grad():
    with torch.no_grad():
        yield


@pytest.fixture
def quiet_collector() -> Iterator[None]:
    """Only explicit collections run during the test (the automatic one is held off, then restored).
    A module whose cases make the collection happen themselves says ``pytestmark =
    pytest.mark.usefixtures("quiet_collector")``."""
    thresholds, enabled = gc.get_threshold(), gc.isenabled()
    gc.collect()
    gc.set_threshold(1_000_000_000)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        (gc.enable if enabled else gc.disable)()


@pytest.fixture(autouse=True)
def fresh_counters():
    """Every test starts from zeroed process-wide counters."""
    from seam import reset_graph_break_stats, reset_step_input_stats

    reset_graph_break_stats()
    reset_step_input_stats()
    yield
