"""The zygote plugin: fork this run's zygote (``harness/zygote.py``) before the project is imported.

Loaded by ``seamgate``'s runs with ``-p harness.rows.pytest_zygote``, ahead of every other ``-p`` plugin
(the reach plugin starts coverage.py, which a zygote must not inherit). Importing this module forks
the zygote: in a run forked from the fork server, torch is already imported, so every child a test
starts through ``harness.zygote.run_python`` skips ``import torch``. Where torch is not loaded yet,
the zygote imports it itself, beside the session, so that it is ready for the first child, unless the
run's ``SEAMGATE_ZYGOTE_PRELOAD`` says otherwise (the executor sets it empty for a project without torch,
``harness/rows/preload.py``: there the zygote imports nothing).
``SEAMGATE_ZYGOTE=0`` turns it off: every child is then a real interpreter.

PYTEST_DONT_REWRITE: nothing here asserts.
"""

from __future__ import annotations

import os
import sys

from .. import zygote  # relative: this plugin may be loaded under a private name (harness/rows/executor.py)

if zygote.ZYGOTE is None and os.environ.get(zygote.ENV, "1") != "0":
    _wanted = os.environ.get(zygote.PRELOAD_ENV)
    _modules = zygote.TORCH_PRELOAD if _wanted is None else tuple(m for m in _wanted.split(",") if m)
    zygote.ZYGOTE = zygote.Zygote.fork(preload=tuple(m for m in _modules if m not in sys.modules))


def pytest_unconfigure(config: object) -> None:
    """The session is over: end the zygote and reap it now (the fork server would otherwise find it
    among the run's descendants, kill it and wait a round for it: ~15 ms a run)."""
    if zygote.ZYGOTE is not None:
        zygote.ZYGOTE.close()
        zygote.ZYGOTE = None
