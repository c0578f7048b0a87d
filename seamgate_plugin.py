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

#: A copy of the arm registry ``seam/arms.py`` (this module imports only ``os`` and ``pytest``);
#: ``tests/reliability/test_arms.py`` keeps the copies equal. Every arm ``SEAM_ARMS`` may name:
KNOWN_ARMS: tuple[str, ...] = ("cpu-emulated", "cuda", "rocm")
#: The arms with a backend in this build, parametrized when ``SEAM_ARMS`` is unset.
PARAMETRIZED: tuple[str, ...] = ("cpu-emulated", "cuda")
_SEAM_PLUGIN = "seam.pytest_plugin"
#: This module is also the private parent of seamgate's run-side plugins in a run whose project has its own
#: top-level ``harness`` (``harness/rows/executor.py`` ``plugin_package``): ``seamgate_plugin.harness.rows.
#: pytest_counting`` is the file ``harness/rows/pytest_counting.py`` beside this one, under a name no project
#: claims. Nothing is imported through it unless a run asks (docs/runner.md).
__path__ = [os.path.dirname(os.path.abspath(__file__))]


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


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("seamgate")
    group.addoption("--emulate-cuda", action="store_true", default=False,
                    help="run the session on seamgate's emulated CUDA device: torch.cuda on the CPU (seam.torch_cuda)")
    parser.addini("emulate_cuda", type="bool", default=False,
                  help="seamgate: run the session on the emulated CUDA device (as --emulate-cuda); "
                       "SEAM_EMULATE_CUDA=0 in the environment turns it off (the real cuda arm)")


def emulation_wanted(config: pytest.Config) -> bool:
    """``SEAM_EMULATE_CUDA=0``, or ``SEAM_ARMS`` without ``cpu-emulated``, wins (a real arm); else
    ``--emulate-cuda``, the ini key, or ``SEAM_EMULATE_CUDA=1``."""
    env = os.environ.get("SEAM_EMULATE_CUDA", "").strip()
    arms = [a.strip() for a in os.environ.get("SEAM_ARMS", "").split(",") if a.strip()]
    if env == "0" or (arms and "cpu-emulated" not in arms):
        return False  # the real cuda arm (the gate runner sets SEAM_ARMS per arm)
    return env == "1" or bool(config.getoption("emulate_cuda", False)) or bool(config.getini("emulate_cuda"))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if emulation_wanted(config):
        # Before collection: module-level ``torch.cuda.is_available()`` and skipif marks see the device.
        from seam.torch_cuda import emulate_cuda

        config._seamgate_emulation = emulate_cuda()  # type: ignore[attr-defined]
        config._seamgate_emulation.__enter__()  # type: ignore[attr-defined]
    config.addinivalue_line(
        "markers", "arm(name): the test exercises one platform arm only (deselected when SEAM_ARMS excludes it, "
                   "OWED when the hardware is missing)"
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    emulation = getattr(config, "_seamgate_emulation", None)
    if emulation is not None:
        emulation.__exit__(None, None, None)


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
    if _seam_plugin_registered(metafunc.config):
        return
    if "backend" in metafunc.fixturenames and _our_backend(metafunc):
        metafunc.parametrize("backend", selected_arms(), indirect=True)
    if "torch_cuda" in metafunc.fixturenames and _our_fixture(metafunc, "torch_cuda"):
        metafunc.parametrize("torch_cuda", selected_arms(), indirect=True)


def _our_fixture(metafunc: pytest.Metafunc, name: str) -> bool:
    known = getattr(metafunc, "_arg2fixturedefs", None)
    defs = (known or {}).get(name) or ()
    return known is None or (bool(defs) and getattr(defs[-1].func, "__module__", None) == __name__)


@pytest.fixture
def torch_cuda(request: pytest.FixtureRequest) -> Iterator[str]:
    """The test runs once per arm against ``torch.cuda`` itself: on ``cpu-emulated`` inside
    ``emulate_cuda()``, on ``cuda`` on the GPU (OWED without one). The value is the arm's name."""
    from seam.pytest_plugin import torch_cuda_for

    yield from torch_cuda_for(request.param)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh backend of the arm this test instance runs on, with the seam's counters reset: a
    ``CudaBackend`` on both arms, inside ``emulate_cuda()`` on ``cpu-emulated`` (``seam.pytest_plugin``)."""
    from seam.pytest_plugin import backend_for

    yield from backend_for(request.param)


@pytest.fixture
def arm(request: pytest.FixtureRequest) -> str:
    """The platform arm this test instance runs on (``cpu-emulated`` or ``cuda``), read from its
    ``backend`` or ``torch_cuda`` parameter: the backend is a ``CudaBackend`` on both arms."""
    from seam.pytest_plugin import arm_of

    return arm_of(request)
