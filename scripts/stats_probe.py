"""A debugging plugin (``-p scripts.stats_probe``): who bumps ``segments_captured``, and from which test.

Every change of seam's process-wide ``segments_captured`` counter is recorded with the test running,
the thread and a short stack; a failing test's records since its setup, and whether the test module
reads the same ``seam.stats`` module the process has now, are printed in the terminal summary.
"""

from __future__ import annotations

import sys
import threading
import traceback

import pytest

_now = {"test": "", "phase": ""}
_records: list[tuple[str, str, str, str]] = []
_failed: list[str] = []
_identity: dict[str, str] = {}
_first_dirty: list[str] = []


class _Recording(dict):
    def __setitem__(self, key, value):
        if key == "segments_captured" and value != self.get(key):
            _records.append((_now["test"], _now["phase"], threading.current_thread().name,
                             f"{self.get(key)} -> {value}\n" + "".join(traceback.format_stack()[-9:-1])))
        super().__setitem__(key, value)


def pytest_configure(config):
    import seam.stats

    seam.stats._counters = _Recording(seam.stats._counters)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _now.update(test=item.nodeid, phase="setup")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    _now.update(phase="call")
    import seam.stats

    if item.nodeid.startswith("tests/seam/") and not _first_dirty and any(seam.stats._counters.values()):
        _first_dirty.append(f"{item.nodeid} starts with {dict(seam.stats._counters)}; the test before it: {_now.get('previous')}")
    read = getattr(item.module, "get_graph_break_stats", None)
    if read is not None:
        here = sys.modules.get("seam.stats")
        _identity[item.nodeid] = (f"test reads module id {id(read.__globals__)}; sys.modules['seam.stats'] id "
                                  f"{id(vars(here)) if here else None}; counters object {type(read.__globals__['_counters']).__name__}")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item):
    _now.update(phase="teardown", previous=item.nodeid)


def pytest_runtest_logreport(report):
    if report.failed:
        _failed.append(report.nodeid)


def pytest_terminal_summary(terminalreporter):
    tr = terminalreporter
    tr.write_line(f"== stats probe: first seam test whose counters were not reset: {_first_dirty or 'none'}")
    for nodeid in _failed:
        tr.write_line(f"== stats probe: {nodeid}: {_identity.get(nodeid, 'no module read')}")
        index = max((i for i, r in enumerate(_records) if r[0] != nodeid), default=-1)
        for test, phase, thread, stack in _records[max(0, index - 3):]:
            tr.write_line(f"-- bump during {test} [{phase}] thread {thread}: {stack}")
