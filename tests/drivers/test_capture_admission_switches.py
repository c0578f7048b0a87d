"""Which lane each admission predicate admits, over every setting of ``SEAM_CUDAGRAPH`` and the driver's own switch.

The switches are read once per process, so the seam suites ask them in child processes. Here the
read-once caches are cleared around each case instead (and cleared again after it, so the rest of
the session reads its real environment): the seam predicate needs a capture-capable backend AND
both switches on; the draft's own predicate is the same rule; the pre-seam predicate never read
``SEAM_CUDAGRAPH``. A driver built with ``graph=None`` takes the lane its predicate admits.
"""

from __future__ import annotations

from typing import Callable, Iterator

import pytest
import torch

from drivers import draft
from drivers.dense import DenseDriver
from drivers.draft import DraftDriver
from drivers.graphed_step import capture_admitted
from drivers.raw_step import raw_admitted
from drivers.scenarios import reference_scenario, run_scenario
from seam import (Backend, EagerBackend, EmulatedBackend, cudagraph_enabled, driver_graph_enabled, get_graph_break_stats,
                  reset_graph_break_stats)

SETTINGS = [(None, None), ("0", None), (None, "0"), ("0", "0"), ("off", "1")]


@pytest.fixture
def switches(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str, str | None, str | None], None]]:
    def set_switches(driver: str, everywhere: str | None, own: str | None) -> None:
        for name, value in (("SEAM_CUDAGRAPH", everywhere), (f"SEAM_{driver.upper()}_GRAPH", own)):
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)
        cudagraph_enabled.cache_clear()
        driver_graph_enabled.cache_clear()

    yield set_switches
    cudagraph_enabled.cache_clear()
    driver_graph_enabled.cache_clear()


def on(value: str | None) -> bool:
    return value is None or value.strip().lower() not in {"0", "false", "off", "no"}


@pytest.mark.parametrize("everywhere,own", SETTINGS)
def test_the_seam_admits_capture_only_on_a_capturing_backend_with_both_switches_on(switches, everywhere, own) -> None:
    switches("dense", everywhere, own)
    assert capture_admitted(EmulatedBackend(), "dense") is (on(everywhere) and on(own))
    assert capture_admitted(EagerBackend(), "dense") is False


@pytest.mark.parametrize("everywhere,own", SETTINGS)
def test_the_draft_predicate_reads_seam_cudagraph_and_seam_draft_graph(switches, everywhere, own) -> None:
    switches("draft", everywhere, own)
    assert draft.capture_lane_admitted(EmulatedBackend()) is (on(everywhere) and on(own))
    assert draft.capture_lane_admitted(EagerBackend()) is False


@pytest.mark.parametrize("everywhere,own", SETTINGS)
def test_the_pre_seam_predicate_reads_only_the_drivers_own_switch(switches, everywhere, own) -> None:
    switches("moe", everywhere, own)
    assert raw_admitted(EmulatedBackend(), "moe") is on(own)
    assert raw_admitted(EagerBackend(), "moe") is False


def test_one_drivers_rollback_switch_leaves_the_other_drivers_admitted(switches) -> None:
    switches("dense", None, "0")
    backend = EmulatedBackend()
    assert capture_admitted(backend, "dense") is False
    assert capture_admitted(backend, "moe") is True and draft.capture_lane_admitted(backend) is True


@pytest.mark.parametrize("make", [DenseDriver, DraftDriver], ids=["dense", "draft"])
@pytest.mark.parametrize("everywhere,own", SETTINGS)
def test_a_driver_left_to_its_predicate_takes_the_lane_it_admits(switches, make, everywhere, own) -> None:
    switches(make.name, everywhere, own)
    backend: Backend = EmulatedBackend()
    assert make(backend).lane == ("capture" if on(everywhere) and on(own) else "eager")
    assert make(EagerBackend()).lane == "eager"
    assert make(backend, graph=True).lane == "capture" and make(backend, graph=False).lane == "eager"


def test_a_capture_lane_forced_with_seam_cudagraph_0_runs_each_step_eagerly_twice_and_keeps_no_graph(switches) -> None:
    """#1352's lane: the scope is inert, so every step pays the warm pass and the forward again; values stay right."""
    switches("dense", "0", None)
    reset_graph_break_stats()
    backend = EmulatedBackend()
    driver, outputs = run_scenario("dense", backend, steps=3, graph=True)
    assert driver.lane == "capture" and driver.step_fn.graph is None
    assert backend.stats.launches == 2 * 3 and backend.trace_ops().count("begin_capture") == 0
    assert get_graph_break_stats().inert_scopes == 3
    assert all(torch.equal(a, b) for a, b in zip(outputs, reference_scenario("dense", steps=3)))
