"""Issue 24's probe (pytest plugin): write node id -> outcome (and the first line of a failure) as JSON.

Loaded with ``-p scripts.probe_outcomes`` (``scripts/run_probe.sh``); the file is ``$PROBE_JSON``.
Outcomes: passed, failed, error (setup), error-teardown (body passed, teardown raised), skipped,
xfailed, xpassed.
"""
from __future__ import annotations

import json
import os
import platform

import pytest

_results: dict[str, dict[str, str]] = {}


def _first_line(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message.splitlines()[0][:300] if crash.message else ""
    if isinstance(report.longrepr, tuple):  # a skip: (file, line, reason)
        return str(report.longrepr[2])[:300]
    return str(report.longrepr).splitlines()[-1][:300] if report.longrepr else ""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    entry = _results.setdefault(report.nodeid, {"outcome": "passed", "detail": ""})
    xfail = hasattr(report, "wasxfail")
    if report.when == "setup":
        if report.failed:
            entry.update(outcome="error", detail=_first_line(report))
        elif report.skipped:
            entry.update(outcome="xfailed" if xfail else "skipped", detail=_first_line(report))
    elif report.when == "call":
        if xfail:
            entry.update(outcome="xfailed" if report.skipped else "xpassed", detail=str(report.wasxfail)[:300])
        elif report.failed:
            entry.update(outcome="failed", detail=_first_line(report))
        elif report.skipped:
            entry.update(outcome="skipped", detail=_first_line(report))
    elif report.when == "teardown" and report.failed and entry["outcome"] == "passed":
        entry.update(outcome="error-teardown", detail=_first_line(report))


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get("PROBE_JSON")
    if not path:
        return
    import torch

    meta = {"torch": torch.__version__, "cuda_available": bool(torch.cuda.is_available()),
            "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none",
            "python": platform.python_version(), "emulated": os.environ.get("SEAM_EMULATE_CUDA", "")}
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": dict(sorted(_results.items()))}, f, indent=1)
