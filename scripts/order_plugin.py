"""Run the collected cases file by file in the order listed in ``$SEAMGATE_FILE_ORDER`` (``-p scripts.order_plugin``).

The device scripts run the whole suite in three file orders. Handing pytest the files themselves in
a shuffled order interleaves a file of ``tests/`` between files of ``tests/seam/``, and pytest 9.1
then drops ``tests/seam/conftest.py``'s fixtures for the later seam files (pytest-dev/pytest#14964):
a red of pytest's, not of the order. So pytest collects ``tests`` as usual and this plugin reorders
the collected items: by the file's place in the list, cases of one file in their own order.

``$SEAMGATE_FILE_ORDER_ONLY=1``: deselect the cases of files the list does not name (a run of a prefix
of an order, to reproduce a red seen at some position of it).

``$SEAMGATE_RED_LOG``: append each case that fails (setup, call or teardown) to that file as it
fails, so a run cut by the device tool's time limit still names its reds (pytest names them only at
the end).
"""

from __future__ import annotations

import os


def pytest_collection_modifyitems(session, config, items):
    listed = os.environ.get("SEAMGATE_FILE_ORDER")
    if not listed:
        return
    with open(listed, encoding="utf-8") as fh:
        order = {line.strip(): i for i, line in enumerate(fh) if line.strip()}
    last = len(order)

    def file_of(item):
        return item.nodeid.split("::")[0]

    if os.environ.get("SEAMGATE_FILE_ORDER_ONLY") == "1":
        dropped = [item for item in items if file_of(item) not in order]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [item for item in items if file_of(item) in order]
    items[:] = sorted(items, key=lambda item: order.get(file_of(item), last))


def pytest_runtest_logreport(report):
    path = os.environ.get("SEAMGATE_RED_LOG")
    if path and report.failed:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{report.nodeid} ({report.when})\n")
