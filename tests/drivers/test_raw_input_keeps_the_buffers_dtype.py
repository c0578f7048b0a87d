"""A raw input's host refresh builds its host vector in the BUFFER's dtype, so no value is rounded on the way.

``RawInput.refresh_from_host`` makes the pageable host tensor with ``dtype=self.device.dtype``. Left
to torch's inference, Python floats become float32 first and a float64 buffer would receive the
rounded value (0.1 arrives as 0.10000000149...).
"""

from __future__ import annotations

import torch

from drivers.raw_step import RawInput, raw_input
from seam import EmulatedBackend


def test_a_float64_raw_input_receives_host_floats_unrounded() -> None:
    backend = EmulatedBackend()
    cell = RawInput(backend, (3,), torch.float64)
    queue = backend.default_queue()
    with backend.use_queue(queue):
        cell.refresh_from_host(queue, [0.1, 1 / 3, 2.0 ** 40 + 0.5])
    got = cell.device.to("cpu").tolist()
    assert cell.device.dtype == torch.float64
    assert got == [0.1, 1 / 3, 2.0 ** 40 + 0.5], "a float32 detour would round every one of these"



def test_raw_input_makes_its_buffer_in_the_dtype_it_is_asked_for() -> None:
    backend = EmulatedBackend()
    cell = raw_input(backend, (2, 1), torch.float64)
    assert cell.device.dtype == torch.float64 and tuple(cell.device.shape) == (2, 1)
    assert raw_input(backend, (2,)).device.dtype == torch.int64, "ids by default"
