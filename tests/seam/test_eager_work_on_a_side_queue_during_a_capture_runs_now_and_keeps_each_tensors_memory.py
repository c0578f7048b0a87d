"""Eager work on a queue outside an open capture runs now, whole, and leaves every tensor in its memory.

While a capture is open, work issued on a queue that is not part of it is not recorded: it runs at
once, with ALL its arguments (keywords included), and a replay does not repeat it (H200
``kernel_on_other_stream``: ``d.add_(e, alpha=2)`` on the other stream leaves ``d`` at 21). Such work
never moves a tensor between host and device memory: a host tensor resized to a device tensor's
shape, in place or through ``out=``, is still host memory (H200: ``h.resize_as_(d)`` and
``resize_as.out(h, d, out=h2)`` on the other stream leave ``h``, ``h2`` on the CPU, readable there
during the capture), so copying it into a device buffer on the capturing queue is refused as the
pageable copy it is (H200 ``pageable_copy``). And eager work on device memory that needs fresh
memory for a result is refused: on the H200 a training batch norm on the other stream is
(``operation not permitted when stream is capturing``), and so is any such work on the emulator,
whichever argument, positional or keyword, holds the device tensor.
"""

from __future__ import annotations

import pytest
import torch

from seam import CaptureStateError, EmulatedBackend, PageableCopyError

from .conftest import capture_full


def test_an_in_place_op_on_a_side_queue_runs_now_with_its_keyword_arguments_and_is_not_replayed(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.ones(2))
    d = emu.to_device(torch.ones(2))
    e = emu.to_device(torch.full((2,), 10.0))
    side = emu.new_queue()

    def body() -> None:
        x.add_(1)  # captured
        with emu.use_queue(side):
            d.add_(e, alpha=2)  # runs now, outside the capture

    g, _ = capture_full(emu, body)
    assert d.tolist() == [21.0, 21.0]
    g.replay()
    assert x.tolist() == [2.0, 2.0] and d.tolist() == [21.0, 21.0]


def test_a_host_tensor_resized_in_place_like_a_device_tensor_on_a_side_queue_stays_host_memory(emu: EmulatedBackend) -> None:
    d = emu.to_device(torch.ones(4))
    target = emu.alloc((4,))
    host = torch.zeros(2)
    side = emu.new_queue()

    def body() -> None:
        with emu.use_queue(side):
            host.resize_as_(d)
        assert len(host.tolist()) == 4  # a host read of host memory: allowed while the capture is open
        target.copy_(host, non_blocking=True)

    with pytest.raises(PageableCopyError, match="^copy from pageable host memory to the device inside graph capture"):
        capture_full(emu, body)
    assert target.tolist() == [0.0] * 4


def test_a_host_tensor_resized_through_out_like_a_device_tensor_on_a_side_queue_stays_host_memory(emu: EmulatedBackend) -> None:
    d = emu.to_device(torch.ones(4))
    target = emu.alloc((4,))
    host, resized = torch.zeros(4), torch.zeros(0)
    side = emu.new_queue()

    def body() -> None:
        with emu.use_queue(side):
            torch.ops.aten.resize_as.out(host, d, out=resized)
        assert resized.tolist() == [0.0] * 4
        target.copy_(resized, non_blocking=True)

    with pytest.raises(PageableCopyError, match="^copy from pageable host memory to the device inside graph capture"):
        capture_full(emu, body)


def test_a_side_queues_training_batch_norm_on_device_memory_is_refused_as_on_the_h200(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.tensor([[1.0, 2.0], [3.0, 6.0]]))
    running_mean, running_var = emu.to_device(torch.zeros(2)), emu.to_device(torch.ones(2))
    side = emu.new_queue()
    outputs: list[torch.Tensor] = []

    def body() -> None:
        with emu.use_queue(side):
            y, _, _ = torch.ops.aten._native_batch_norm_legit(x, None, None, running_mean, running_var, True, 0.1, 1e-5)
        outputs.append(y)

    with pytest.raises(CaptureStateError, match="allocates device memory"):
        capture_full(emu, body)
    assert not outputs
    assert running_mean.tolist() == [0.0, 0.0]  # refused before it ran: nothing was written


def test_side_queue_work_that_reads_device_memory_through_a_keyword_only_and_allocates_is_refused(emu: EmulatedBackend) -> None:
    """Every argument counts, keywords included: here the only device tensor is ``sorter=``."""
    sequence, values = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.5])
    sorter = emu.to_device(torch.tensor([0, 1, 2]))
    side = emu.new_queue()
    found: list[torch.Tensor] = []

    def body() -> None:
        with emu.use_queue(side):
            found.append(torch.searchsorted(sequence, values, sorter=sorter))

    with pytest.raises(CaptureStateError, match="allocates device memory"):
        capture_full(emu, body)
    assert not found
