"""``run_scenario`` issues everything, the host read-back included, on the backend's default queue.

On CUDA a read-back issued on another stream would race the queue's work. The backend's current
queue at each tensor operation (``QueueOfEachOp``) is the default queue's, for every driver's build,
steps and read-back; none runs with no queue current.
"""

from __future__ import annotations

import pytest

from drivers.scenarios import DRIVERS, run_scenario
from seam import EmulatedBackend

from .queue_of_each_op import QueueOfEachOp


@pytest.mark.parametrize("name", list(DRIVERS))
def test_every_operation_of_a_scenario_runs_with_the_default_queue_current(name: str) -> None:
    backend = EmulatedBackend()
    default = backend.default_queue().id
    with QueueOfEachOp(backend) as seen:
        _, outputs = run_scenario(name, backend, steps=2, graph=False)
    assert outputs and seen.seen, "the scenario ran tensor work"
    queues = {q for _, q in seen.seen}
    if name != "aux":
        assert queues == {default}
    else:  # the aux driver forks its shared expert onto a side queue and joins it back
        assert default in queues and None not in queues
    assert seen.seen[-1][1] == default, "the read-back is on the default queue"
