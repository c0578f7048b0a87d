"""The pytest11 entry point of installed seamgate: the ``backend`` fixture, importing seam/torch only when a test asks for it.

Installing seamgate must not change anyone's test suite. This module imports only ``os`` and
``pytest``; a session whose tests never ask for THIS ``backend`` (a project's own fixture of that name
is left alone) nor carry ``@pytest.mark.arm`` naming one of our arms never imports ``seam`` or
``torch``: no import time, no NumPy warning under ``filterwarnings = error``.
When a test does ask, the fixture hands over to ``seam.pytest_plugin`` (the seam's own plugin, which
the repository's root ``conftest.py`` loads by name); when that plugin is registered in the session
as well, this one stands aside so the ``backend`` parameter is never added twice.
"""

from __future__ import annotations

import os
from typing import Any, Iterator

import pytest

#: A copy of the arm registry ``harness/arms.py`` (this module imports only ``os`` and ``pytest``);
#: ``tests/reliability/test_arms.py`` keeps the copies equal. Every arm ``SEAM_ARMS`` may name:
KNOWN_ARMS: tuple[str, ...] = ("cpu-emulated", "cuda", "rocm")
#: The arms with a backend in this build, parametrized when ``SEAM_ARMS`` is unset.
PARAMETRIZED: tuple[str, ...] = ("cpu-emulated", "cuda")
_SEAM_PLUGIN = "seam.pytest_plugin"


def _seam_plugin_registered(config: pytest.Config) -> bool:
    return config.pluginmanager.has_plugin(_SEAM_PLUGIN)


def selected_arms() -> tuple[str, ...]:
    """The arms to parametrize: ``SEAM_ARMS`` if set (any known arm), else the arms with a backend here."""
    raw = os.environ.get("SEAM_ARMS", "").strip()
    if not raw:
        return PARAMETRIZED
    arms = tuple(a.strip() for a in raw.split(",") if a.strip())
    unknown = [a for a in arms if a not in KNOWN_ARMS]
    if unknown:
        raise pytest.UsageError(f"SEAM_ARMS names unknown arm(s) {unknown}; known arms: {', '.join(KNOWN_ARMS)}")
    return arms


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "arm(name): the test exercises one platform arm only (deselected when SEAM_ARMS excludes it, "
                   "OWED when the hardware is missing)"
    )


def _names_an_arm(item: pytest.Item) -> bool:
    """``@pytest.mark.arm(X)`` with X one of OUR arms (a project's own ``arm`` marker is not ours)."""
    return any(m.args and m.args[0] in KNOWN_ARMS for m in item.iter_markers("arm"))


def _our_backend(metafunc: pytest.Metafunc) -> bool:
    """The ``backend`` this test resolves to is this plugin's (a project's own ``backend`` fixture is not)."""
    known = getattr(metafunc, "_arg2fixturedefs", None)
    if known is None:  # a pytest without the mapping: behave as before (ours)
        return True
    defs = known.get("backend") or ()
    return bool(defs) and getattr(defs[-1].func, "__module__", None) == __name__


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``@pytest.mark.arm(X)``: deselected when X is not selected, OWED where X cannot run (seam imported then only)."""
    if _seam_plugin_registered(config) or not any(_names_an_arm(item) for item in items):
        return
    from seam.pytest_plugin import pytest_collection_modifyitems as seam_modifyitems

    seam_modifyitems(config, items)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames and not _seam_plugin_registered(metafunc.config) and _our_backend(metafunc):
        metafunc.parametrize("backend", selected_arms(), indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh backend of the arm this test instance runs on, with the seam's counters reset."""
    from seam.pytest_plugin import arm_unavailable_reason, make_backend
    from seam import reset_graph_break_stats, reset_step_input_stats

    arm = request.param
    reason = arm_unavailable_reason(arm)
    if reason is not None:
        pytest.skip(f"OWED: {reason}")
    reset_graph_break_stats()
    reset_step_input_stats()
    yield make_backend(arm)
