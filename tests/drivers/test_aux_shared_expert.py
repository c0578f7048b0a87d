"""The aux driver's shared expert: added to the routed experts, forked onto the side queue and joined back, per layer.

On the eager lane (and inside a capture) each layer's shared expert runs on the side queue: the
main queue records an event the side queue waits for (fork), and the side queue records one the
main queue waits for (join). The values are the routed experts plus the dense shared expert,
whichever queue computed them.
"""

from __future__ import annotations

import torch

from drivers import aux
from drivers.config import DriverConfig
from drivers.tiny_model import TinyWeights, dense_ffn, moe_ffn
from seam import EagerBackend, EmulatedBackend

from .queue_of_each_op import QueueOfEachOp

CFG = DriverConfig()


def test_the_shared_expert_is_added_to_the_routed_experts_output() -> None:
    layer = TinyWeights.seeded(CFG).layers[0]
    h = torch.randn(2, 1, CFG.hidden, generator=torch.Generator().manual_seed(4))
    shared = torch.full((2, 1, CFG.hidden), 0.25)
    assert torch.equal(aux.shared_expert_ffn(layer, h, CFG.top_k, shared), moe_ffn(layer, h, CFG.top_k) + shared)
    assert not torch.equal(aux.shared_expert_ffn(layer, h, 1, shared), aux.shared_expert_ffn(layer, h, CFG.top_k, shared))


def test_an_eager_step_forks_each_layers_shared_expert_onto_the_side_queue_and_joins_it_back() -> None:
    backend = EagerBackend()
    driver = aux.AuxDriver(backend, CFG)
    main, side = driver.queue.id, driver.side.id
    assert side != main, "precondition: a separate side queue"
    backend.trace.clear()
    driver.step([1, 8], 0)
    waits = [(e.queue, int(e.detail.split("from=")[1])) for e in backend.trace if e.op == "wait_event"]
    assert waits == [(side, main), (main, side)] * CFG.layers, "per layer: the side queue waits for main, then main for it"
    recorded = [e.queue for e in backend.trace if e.op == "record_event"]
    assert recorded.count(side) == CFG.layers, "one join event recorded on the side queue per layer"


def test_the_shared_expert_gives_the_same_values_on_the_side_queue_as_inline() -> None:
    backend = EmulatedBackend()
    driver = aux.AuxDriver(backend, CFG, graph=False)
    layer = driver.weights.layers[1]
    h = torch.randn(2, 1, CFG.hidden, generator=torch.Generator().manual_seed(8))
    with backend.use_queue(driver.queue):
        assert torch.equal(driver._shared_on_side_queue(layer, h), dense_ffn(layer, h))
        assert torch.equal(driver._ffn(layer, h), aux.shared_expert_ffn(layer, h, CFG.top_k, dense_ffn(layer, h)))


def test_overlap_is_allowed_outside_any_capture() -> None:
    assert aux.overlap_allowed() is True


def test_the_shared_experts_work_runs_on_the_side_queue_and_the_routed_experts_on_the_main_queue() -> None:
    backend = EagerBackend()
    driver = aux.AuxDriver(backend, CFG)
    layer = driver.weights.layers[0]
    h = torch.randn(2, 1, CFG.hidden, generator=torch.Generator().manual_seed(6))
    with backend.use_queue(driver.queue), QueueOfEachOp(backend) as ops:
        driver._ffn(layer, h)
    assert ops.queues_of("relu") == {driver.side.id, driver.queue.id}, "the shared expert's ReLU on the side queue"
    assert ops.queues_of("topk") == {driver.queue.id} and ops.queues_of("add") == {driver.queue.id}
