"""An integer buffer born in a capture holds a sentinel until a replay; a one-byte one too, and the capture closes.

The emulator poisons every integer buffer born in a capture with a sentinel; a one-byte integer
cannot hold it, and the close failed (``fill_`` refuses a value that overflows the dtype), so a
capture that made a ``uint8`` or ``int8`` tensor (a cast, a byte mask, the empty reserve buffer of a
training batch norm) could not close, where CUDA captures it.
"""

from __future__ import annotations

import pytest
import torch

from seam import BreakableGraph, CaptureMode, EmulatedBackend, GraphCaptureScope


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
def test_a_byte_tensor_made_in_a_capture_holds_a_sentinel_until_a_replay_computes_it(dtype: torch.dtype) -> None:
    emu = EmulatedBackend()
    x = emu.to_device(torch.tensor([1.0, 2.0]))
    g = BreakableGraph(emu, CaptureMode.FULL)
    with torch.no_grad(), GraphCaptureScope(emu, emu.default_queue(), g):
        out = x.to(dtype)
    assert out.dtype == dtype and out.tolist() == [0x5B, 0x5B]  # the sentinel's low byte, in both dtypes
    emu.copy(x, emu.to_device(torch.tensor([3.0, 4.0])), emu.default_queue())
    g.replay()
    assert out.tolist() == [3, 4]


@pytest.mark.parametrize("dtype", [torch.int16, torch.int32, torch.int64])
def test_a_wider_integer_tensor_made_in_a_capture_holds_the_whole_sentinel(dtype: torch.dtype) -> None:
    emu = EmulatedBackend()
    x = emu.to_device(torch.tensor([1.0, 2.0]))
    g = BreakableGraph(emu, CaptureMode.FULL)
    with torch.no_grad(), GraphCaptureScope(emu, emu.default_queue(), g):
        out = x.to(dtype)
    assert out.tolist() == [-0x5EA5, -0x5EA5]
    g.replay()
    assert out.tolist() == [1, 2]
