"""The pre-migration machinery as code (``drivers/raw_step.py``): what a driver switched to ``Machinery.RAW`` runs.

The red-first, G2 and G4 gates read the seam tests' verdicts on drivers running this machinery, so
it is pinned here on its own: the raw pair and nothing of the seam (no scope, no segments counted,
no pinned staging), replays that read the refreshed buffers, hand-split PIECEWISE captures, the
pre-seam admission, and ``GraphedStep``'s interface.
"""

from __future__ import annotations

import inspect

import pytest
import torch

from drivers import dense
from drivers.config import DriverConfig
from drivers.graphed_step import GraphedStep
from drivers.raw_step import RawInput, RawStep, RawTokenIds, raw_admitted
from drivers.scenarios import run_scenario
from drivers.step_driver import Machinery, StepDriver
from drivers.step_token_ids import StepTokenIds
from seam import Backend, CaptureMode, EagerBackend, EmulatedBackend, StepInputStats, get_graph_break_stats
from seam import get_step_input_stats, switches

from .machinery import machinery_ops

STEPS = 3


def doubling_step(backend: Backend, admitted: bool = True) -> tuple[RawStep, RawInput]:
    """A raw step whose forward doubles a ``[2]`` input buffer."""
    cell = RawInput(backend, (2,))
    return RawStep(backend, lambda: cell.device * 2, admitted=admitted, inputs=(cell,)), cell


def test_the_first_run_captures_through_the_raw_pair_and_every_run_replays_with_no_scope(backend: Backend) -> None:
    step, cell = doubling_step(backend)
    got = []
    with backend.use_queue(step.queue):
        for value in range(STEPS):
            cell.refresh_from_host(step.queue, [value, value + 10])
            got.append(step.run().to("cpu").tolist())
    assert step.lane == "capture" and len(step.segments) == 1
    assert machinery_ops(backend) == ["launch", "synchronize", "begin_capture", "end_capture"] + ["replay"] * STEPS
    assert got == [[2 * v, 2 * (v + 10)] for v in range(STEPS)], "each replay reads the buffer refreshed before it"
    stats = get_graph_break_stats()
    assert (stats.segments_captured, stats.replays, stats.inert_scopes) == (0, 0, 0), "the seam saw nothing"


def test_not_admitted_or_on_a_backend_that_cannot_capture_every_run_is_one_launch() -> None:
    for backend, admitted in ((EmulatedBackend(), False), (EagerBackend(), True)):
        step, cell = doubling_step(backend, admitted)
        with backend.use_queue(step.queue):
            cell.refresh_from_host(step.queue, [1, 2])
            outputs = [step.run().tolist() for _ in range(STEPS)]
        assert step.lane == "eager" and outputs == [[2, 4]] * STEPS
        assert machinery_ops(backend) == ["launch"] * STEPS


def test_raw_inputs_are_plain_copies_with_no_pinned_staging_and_no_step_input_counted(backend: Backend) -> None:
    cell = RawInput(backend, (2, 1))
    queue = backend.default_queue()
    with backend.use_queue(queue):
        cell.refresh_from_host(queue, [4, 5])
        source = backend.to_device(torch.tensor([6, 7]))
        copies_before = backend.trace_ops().count("copy")
        cell.refresh_from_device(queue, source)
        assert backend.trace_ops().count("copy") == copies_before + 1
        assert cell.device.to("cpu").view(-1).tolist() == [6, 7]
    assert "alloc_pinned" not in backend.trace_ops()
    assert get_step_input_stats() == StepInputStats(binds=0, host_refreshes=0, device_refreshes=0)


def test_raw_token_ids_are_read_back_to_the_host_then_uploaded(backend: Backend) -> None:
    reads: list[int] = []

    class DeviceIds:  # stands for the runner's device buffer; the raw form may only read it back
        def tolist(self) -> list[int]:
            reads.append(1)
            return [11, 12]

    ids = RawTokenIds(backend, slots=2)
    queue = backend.default_queue()
    with backend.use_queue(queue):
        ids.refresh(queue, DeviceIds())  # type: ignore[arg-type]
        assert ids.ids.shape == (2, 1) and ids.ids.to("cpu").view(-1).tolist() == [11, 12]
    assert reads == [1] and get_step_input_stats().device_refreshes == 0, "a host round trip, not a device refresh"


def test_a_piecewise_raw_step_splits_its_capture_by_hand_and_runs_the_break_between_the_replays(backend: Backend) -> None:
    cell, bridge = RawInput(backend, (2,)), backend.alloc((2,))
    between: list[int] = []

    def forward() -> torch.Tensor:
        first = cell.device * 2
        step.break_point(lambda: (between.append(1), backend.copy(bridge, first + 1, step.queue)))
        return bridge * 3

    step = RawStep(backend, forward, admitted=True, mode=CaptureMode.PIECEWISE)
    with backend.use_queue(step.queue):
        outputs = []
        for value in range(STEPS):
            cell.refresh_from_host(step.queue, [value, value])
            outputs.append(step.run().to("cpu").tolist())
    assert len(step.segments) == 2 and len(between) == 2 + STEPS, "warm pass, capture, then once per replay"
    assert outputs == [[3 * (2 * v + 1)] * 2 for v in range(STEPS)]
    ops = [op for op in backend.trace_ops() if op in ("begin_capture", "end_capture", "replay")]
    assert ops == ["begin_capture", "end_capture", "begin_capture", "end_capture"] + ["replay", "replay"] * STEPS
    assert get_graph_break_stats().breaks == 0, "no scope counted a break"


def test_a_break_point_outside_a_capture_or_in_full_mode_just_runs_its_body() -> None:
    backend = EmulatedBackend()
    for mode in (CaptureMode.FULL, CaptureMode.PIECEWISE):
        step = RawStep(backend, lambda: torch.zeros(1), admitted=True, mode=mode)
        assert step.break_point(lambda: 7) == 7 and step.segments == []


def test_in_full_mode_a_break_point_inside_the_capture_runs_inline_and_splits_nothing() -> None:
    backend = EmulatedBackend()
    calls: list[int] = []
    step = RawStep(backend, lambda: (step.break_point(lambda: calls.append(1)), torch.ones(1))[1], admitted=True)
    with backend.use_queue(step.queue):
        for _ in range(STEPS):
            step.run()
    assert len(step.segments) == 1 and calls == [1, 1], "warm pass and capture only: nothing re-runs at a replay"


def test_close_destroys_every_segment_and_the_next_run_captures_again() -> None:
    backend = EmulatedBackend()
    step, cell = doubling_step(backend)
    with backend.use_queue(step.queue):
        cell.refresh_from_host(step.queue, [1, 1])
        step.run()
        step.close()
        assert step.segments == [] and machinery_ops(backend)[-1] == "destroy"
        step.run()
    assert machinery_ops(backend).count("begin_capture") == 2


def test_the_pre_seam_admission_reads_the_drivers_own_switch_and_never_seam_cudagraph(monkeypatch: pytest.MonkeyPatch) -> None:
    for cudagraph, dense_graph, expected in (("0", "1", True), ("1", "0", False), ("0", "0", False)):
        monkeypatch.setenv("SEAM_CUDAGRAPH", cudagraph)
        monkeypatch.setenv("SEAM_DENSE_GRAPH", dense_graph)
        switches.cudagraph_enabled.cache_clear()
        switches.driver_graph_enabled.cache_clear()
        try:
            assert raw_admitted(EmulatedBackend(), "dense") is expected
            assert raw_admitted(EagerBackend(), "dense") is False
        finally:
            switches.cudagraph_enabled.cache_clear()
            switches.driver_graph_enabled.cache_clear()


def test_the_raw_step_takes_the_graphed_steps_arguments() -> None:
    assert inspect.signature(RawStep.__init__).parameters.keys() == inspect.signature(GraphedStep.__init__).parameters.keys()
    for method in ("run", "close"):
        assert callable(getattr(RawStep, method)) and callable(getattr(GraphedStep, method))


def test_a_driver_switched_to_the_raw_machinery_builds_raw_parts_and_gives_the_same_values() -> None:
    class RawDense(dense.DenseDriver):
        machinery = Machinery.RAW

    raw = RawDense(EmulatedBackend(), DriverConfig(), graph=True)
    assert isinstance(raw.step_fn, RawStep) and isinstance(raw.tokens, RawInput) and raw.lane == "capture"
    seam_driver = dense.DenseDriver(EmulatedBackend(), DriverConfig(), graph=True)
    assert isinstance(seam_driver.step_fn, GraphedStep) and not isinstance(seam_driver.tokens, RawInput)
    rows = [[1, 2], [3, 4], [5, 6]]
    for driver in (raw, seam_driver):
        with driver.backend.use_queue(driver.queue):
            driver.outputs = [driver.step(row, pos) for pos, row in enumerate(rows)]  # type: ignore[attr-defined]
    assert all(torch.equal(a, b) for a, b in zip(raw.outputs, seam_driver.outputs))  # type: ignore[attr-defined]


def test_each_machinery_makes_its_own_token_ids() -> None:
    class Probe(StepDriver):
        name = "probe"

    for machinery, kind in ((Machinery.SEAM, StepTokenIds), (Machinery.RAW, RawTokenIds)):
        Probe.machinery = machinery
        assert isinstance(Probe(EmulatedBackend(), DriverConfig(), graph=False).new_token_ids(), kind)


def test_a_scenario_runs_unchanged_on_a_raw_driver() -> None:
    class RawDense(dense.DenseDriver):
        machinery = Machinery.RAW

    module = type("m", (), {"DenseDriver": RawDense})
    driver, outputs = run_scenario("dense", EmulatedBackend(), steps=STEPS, module=module)  # type: ignore[arg-type]
    _, expected = run_scenario("dense", EmulatedBackend(), steps=STEPS, graph=False)
    assert isinstance(driver.step_fn, RawStep) and all(torch.equal(a, b) for a, b in zip(outputs, expected))
