"""The emulator's memory bookkeeping: every output born in a capture poisoned, memory kinds that never drift.

Poisoning is what makes a forgotten replay visible on the CPU, so it must reach every output of
every dtype that has a value no computation yields (complex included; a bool has none, so it keeps
its capture-time value). The device registry decides what a copy inside a capture is (device,
pinned, pageable); a buffer's kind must not drift when eager work on another queue touches it, nor
outlive the buffer (a recycled storage id must not read as device memory).
"""

from __future__ import annotations

import pytest
import torch

from seam import BreakableGraph, CaptureMode, CaptureSyncError, EmulatedBackend, GraphCaptureScope
from seam.emulator import DeviceRegistry


def capture(emu: EmulatedBackend, body, mode: CaptureMode = CaptureMode.FULL):
    g = BreakableGraph(emu, mode)
    with GraphCaptureScope(emu, emu.default_queue(), g) as scope:
        out = body(scope)
    return g, out


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_a_complex_output_born_in_capture_is_nan_until_a_replay(emu: EmulatedBackend, dtype) -> None:
    x = emu.to_device(torch.tensor([1 + 2j, 3 - 1j], dtype=dtype))
    g, out = capture(emu, lambda s: x * 2)
    assert torch.isnan(out).all() and torch.isnan(out.real).all()
    g.replay()
    assert out.tolist() == [2 + 4j, 6 - 2j]


def test_a_bool_output_born_in_capture_keeps_its_capture_time_value_and_replays(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.tensor([1.0, -1.0]))
    g, out = capture(emu, lambda s: x > 0)
    assert out.dtype == torch.bool and out.tolist() == [True, False]  # no bool value is garbage
    x.copy_(emu.to_device(torch.tensor([-1.0, 1.0])))
    g.replay()
    assert out.tolist() == [False, True]


def test_every_output_of_a_three_output_op_is_poisoned_until_a_replay(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.tensor([[1.0, 2.0, 3.0, 4.0]]))
    g, (out, mean, rstd) = capture(emu, lambda s: torch.ops.aten.native_layer_norm(x, [4], None, None, 1e-5))
    assert torch.isnan(out).all() and torch.isnan(mean).all() and torch.isnan(rstd).all()
    g.replay()
    assert mean.flatten().tolist() == [2.5] and rstd.flatten()[0].item() > 0 and not torch.isnan(out).any()


def test_a_pinned_block_a_side_queue_copied_into_during_a_capture_stays_pinned(emu: EmulatedBackend) -> None:
    d = emu.to_device(torch.tensor([1.0, 2.0]))
    pinned = emu.alloc_pinned((2,))
    side = emu.new_queue()
    with pytest.raises(CaptureSyncError, match="^a BLOCKING copy between pinned host memory and the device"):
        with GraphCaptureScope(emu, emu.default_queue(), BreakableGraph(emu)):
            with emu.use_queue(side):  # not part of the capture: runs now
                pinned.copy_(d, non_blocking=True)
            assert emu.registry.kind_of(pinned) == "pinned"
            d.copy_(pinned)  # BLOCKING, from pinned memory: refused as on the H200
    assert pinned.tolist() == [1.0, 2.0]  # the side queue's copy really ran


def test_the_registry_forgets_a_dead_buffer_so_a_recycled_storage_never_reads_as_device_memory() -> None:
    registry = DeviceRegistry()
    misread = 0
    for _ in range(1000):
        dead = torch.zeros(4)
        registry.mark(dead, "device")
        del dead
        fresh = torch.zeros(4)  # often gets the dead storage's id
        misread += registry.kind_of(fresh) != "pageable"
    assert misread == 0


def test_a_marked_buffer_keeps_its_kind_and_an_unmarked_one_is_pageable() -> None:
    registry = DeviceRegistry()
    d, p, h = torch.zeros(2), torch.zeros(2), torch.zeros(2)
    registry.mark(d, "device")
    registry.mark(p, "pinned")
    registry.mark(d, "device")  # marking again changes nothing
    assert (registry.kind_of(d), registry.kind_of(d[1:]), registry.kind_of(p), registry.kind_of(h)) == \
        ("device", "device", "pinned", "pageable")


def test_an_unannotated_view_of_an_input_leaves_the_input_unpoisoned_and_follows_it(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    g, (view, y) = capture(emu, lambda s: (lambda v: (v, v * 10))(torch.ops.aten._unsafe_view(x, [2, 2])))
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0]  # aten._unsafe_view carries no alias annotation: still x's memory
    assert torch.isnan(y).all()
    x.copy_(emu.to_device(torch.tensor([5.0, 6.0, 7.0, 8.0])))
    g.replay()
    assert view.tolist() == [[5.0, 6.0], [7.0, 8.0]] and y.tolist() == [[50.0, 60.0], [70.0, 80.0]]
