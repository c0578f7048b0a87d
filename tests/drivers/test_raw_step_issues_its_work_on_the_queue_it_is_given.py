"""The raw machinery issues every copy and replay on the queue it is handed, not on whatever queue is current.

``RawInput.refresh_from_host``/``refresh_from_device`` and ``RawTokenIds.refresh`` copy on their
``queue`` argument; ``RawStep`` replays each segment on its own queue. The backend trace names the
queue of each call; a side queue that is NOT current when the refresh is issued tells the two apart.
"""

from __future__ import annotations

import torch

from drivers.raw_step import RawInput, RawStep, RawTokenIds
from seam import EmulatedBackend


def copy_queues(backend: EmulatedBackend) -> list[int | None]:
    return [e.queue for e in backend.trace if e.op == "copy"]


def test_raw_input_refreshes_copy_on_the_queue_they_are_given() -> None:
    backend = EmulatedBackend()
    side = backend.new_queue()
    cell = RawInput(backend, (2,))
    with backend.use_queue(backend.default_queue()):
        cell.refresh_from_host(side, [4, 5])
        cell.refresh_from_device(side, backend.to_device(torch.tensor([6, 7])))
    assert copy_queues(backend) == [side.id, side.id]
    assert cell.device.to("cpu").tolist() == [6, 7]


def test_raw_token_ids_upload_on_the_queue_they_are_given() -> None:
    backend = EmulatedBackend()
    side = backend.new_queue()
    ids = RawTokenIds(backend, slots=2)
    with backend.use_queue(backend.default_queue()):
        ids.refresh(side, torch.tensor([11, 12]))
    assert copy_queues(backend) == [side.id]
    assert ids.ids.to("cpu").view(-1).tolist() == [11, 12]


def test_every_replay_of_a_raw_step_is_issued_on_the_steps_queue() -> None:
    backend = EmulatedBackend()
    cell = RawInput(backend, (2,))
    step = RawStep(backend, lambda: cell.device * 2, admitted=True)
    with backend.use_queue(step.queue):
        for value in range(3):
            cell.refresh_from_host(step.queue, [value, value])
            assert step.run().to("cpu").tolist() == [2 * value, 2 * value]
    replays = [e.queue for e in backend.trace if e.op == "replay"]
    assert replays == [step.queue.id] * 3
