"""Where a driver keeps its buffers and where it issues its work: device memory from the backend, on the driver's queue.

On a GPU a KV cache made by plain ``torch.zeros`` lives in host memory the graph cannot read, and an
upload issued off the driver's queue races its replay. The CPU emulator tells device memory from
host memory (its registry) and the trace names each copy's queue, so both show here.
"""

from __future__ import annotations

import pytest
import torch

from drivers.scenarios import DRIVERS, run_scenario
from seam import CaptureMode, EmulatedBackend, get_graph_break_stats, reset_graph_break_stats

from .queue_of_each_op import QueueOfEachOp

#: name -> the buffers the driver keeps on the device across steps.
KEPT = {
    "dense": lambda d: [d.cache.k, d.cache.v],
    "moe": lambda d: [d.cache.k, d.cache.v],
    "draft": lambda d: [d.cache.k, d.cache.v],
    "resident": lambda d: [d.resident.k, d.resident.v],
    "aux": lambda d: [d.cache.k, d.cache.v],
    "piecewise": lambda d: [d.cache.k, d.cache.v, d.bridge],
}


@pytest.mark.parametrize("name", list(DRIVERS))
def test_a_drivers_cache_and_kept_buffers_are_device_memory_made_by_the_backend(name: str) -> None:
    backend = EmulatedBackend()
    driver, _ = run_scenario(name, backend, steps=1, graph=False)
    kinds = [backend.registry.kind_of(t) for t in KEPT[name](driver)]
    assert kinds == ["device"] * len(kinds)
    assert backend.registry.kind_of(driver.weights.embed) == "device"


@pytest.mark.parametrize("graph", [False, True], ids=["eager-lane", "capture-lane"])
@pytest.mark.parametrize("name", list(DRIVERS))
def test_every_upload_of_a_step_is_issued_on_the_drivers_queue(name: str, graph: bool) -> None:
    backend = EmulatedBackend()
    driver, _ = run_scenario(name, backend, steps=2, graph=graph)
    backend.trace.clear()
    with backend.use_queue(backend.new_queue()):  # the caller's queue is not the driver's
        if name == "draft":
            driver.propose([1, 2], 4)
        elif name == "moe":
            driver.step(backend.to_device(torch.tensor([3, 4])), 2)
        elif name == "resident":
            driver.step([3, 4], [2, 4])
        else:
            driver.step([3, 4], 2)
    copies = [e.queue for e in backend.trace if e.op == "copy"]
    assert copies and set(copies) == {driver.queue.id}, f"{name}: copies issued on {copies}"


@pytest.mark.parametrize("name", list(DRIVERS))
def test_each_driver_captures_in_its_documented_mode(name: str) -> None:
    driver, _ = run_scenario(name, EmulatedBackend(), steps=1, graph=True)
    want = CaptureMode.PIECEWISE if name == "piecewise" else CaptureMode.FULL
    assert driver.step_fn.mode is want and driver.step_fn.graph.mode is want


@pytest.mark.parametrize("graph", [False, True], ids=["eager-lane", "capture-lane"])
def test_a_steps_output_is_read_back_on_the_drivers_queue_as_a_copy(graph: bool) -> None:
    backend = EmulatedBackend()
    driver, _ = run_scenario("dense", backend, steps=1, graph=graph)
    with backend.use_queue(backend.new_queue()), QueueOfEachOp(backend) as ops:
        first = driver.step([3, 4], 1)
    assert ops.queues_of("clone") == {driver.queue.id}
    second = driver.step([5, 6], 2)
    assert not torch.equal(first, second), "each step's output is its own copy, not the static buffer"


def test_closing_a_driver_destroys_its_graph_and_the_next_step_captures_again() -> None:
    backend = EmulatedBackend()
    reset_graph_break_stats()
    driver, outputs = run_scenario("dense", backend, steps=2, graph=True)
    graph = driver.step_fn.graph
    driver.close()
    assert driver.step_fn.graph is None and graph.destroyed and backend.trace_ops().count("destroy") == 1
    driver.close()  # closing twice destroys nothing more
    assert backend.trace_ops().count("destroy") == 1
    again = driver.step([1, 8], 2)
    assert get_graph_break_stats().segments_captured == 2 and driver.step_fn.graph is not graph
    assert again.shape == outputs[0].shape
