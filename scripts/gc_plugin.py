"""A pytest plugin for isolating a red that comes and goes: ``SEAMGATE_GC=off`` disables Python's cyclic
collector for the session, ``SEAMGATE_GC=collect`` forces a full collection before every case
(``pytest -p scripts.gc_plugin``; used by ``scripts/device_orders.sh``)."""

from __future__ import annotations

import gc
import os

import pytest

MODE = os.environ.get("SEAMGATE_GC", "")


def pytest_sessionstart(session: pytest.Session) -> None:
    if MODE == "off":
        gc.disable()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if MODE == "collect":
        gc.collect()
