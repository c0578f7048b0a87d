"""The CPU emulator's promise that nothing really runs in capture: born buffers poisoned, written ones restored.

A GPU runs nothing while it captures, so code that reads a captured output (or a buffer the
capture wrote) before a replay reads garbage or the OLD value. The emulator must show the same, or a
driver that forgets its replay passes on the CPU and fails on the H200. Rows cover the dtypes, the
ways a buffer can be written (in place, ``copy_``, ``out=``, through a view, twice) and PIECEWISE
segments, then check that replays do the real work.
"""

from __future__ import annotations

import pytest
import torch

from seam import BreakableGraph, CaptureMode, EmulatedBackend, GraphCaptureScope


def capture(emu: EmulatedBackend, body, mode: CaptureMode = CaptureMode.FULL):
    g = BreakableGraph(emu, mode)
    with GraphCaptureScope(emu, emu.default_queue(), g) as scope:
        out = body(scope)
    return g, out


# ---- buffers born in the capture hold no valid value until a replay ----------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.int32, torch.int16])
def test_an_output_born_in_capture_holds_no_computed_value_until_a_replay(emu: EmulatedBackend, dtype) -> None:
    x = emu.to_device(torch.tensor([1, 2, 3], dtype=dtype))
    g, out = capture(emu, lambda s: x * 3 + 1)
    expected = (torch.tensor([1, 2, 3], dtype=dtype) * 3 + 1)
    if dtype.is_floating_point:
        assert torch.isnan(out).all()
    else:
        assert (out != expected).all() and (out == out.flatten()[0]).all()  # one sentinel everywhere
    g.replay()
    assert torch.equal(out, expected)


def test_every_output_of_a_multi_output_op_is_poisoned(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.tensor([[3.0, 1.0, 2.0]]))
    g, (values, indices) = capture(emu, lambda s: torch.max(x, dim=1))
    assert torch.isnan(values).all() and indices.item() != 0
    g.replay()
    assert values.tolist() == [3.0] and indices.tolist() == [0]


def test_an_intermediate_born_in_capture_is_poisoned_too(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.tensor([1.0, 2.0]))
    kept = {}

    def body(scope):
        kept["mid"] = x + 1
        return kept["mid"] * 2

    g, out = capture(emu, body)
    assert torch.isnan(kept["mid"]).all() and torch.isnan(out).all()
    g.replay()
    assert kept["mid"].tolist() == [2.0, 3.0] and out.tolist() == [4.0, 6.0]


def test_a_born_buffer_written_in_place_in_the_capture_is_poisoned_not_restored(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.tensor([1.0, 2.0]))

    def body(scope):
        y = x * 2
        y.add_(1)
        return y

    g, out = capture(emu, body)
    assert torch.isnan(out).all()
    g.replay()
    assert out.tolist() == [3.0, 5.0]


def test_outputs_of_both_piecewise_segments_are_poisoned(emu: EmulatedBackend) -> None:
    x = emu.to_device(torch.tensor([1.0, 2.0]))
    seen = {}

    def body(scope):
        seen["first"] = x + 1
        scope.break_point(lambda: None)
        seen["second"] = x * 5
        return None

    g, _ = capture(emu, body, CaptureMode.PIECEWISE)
    assert torch.isnan(seen["first"]).all() and torch.isnan(seen["second"]).all()
    g.replay()
    assert seen["first"].tolist() == [2.0, 3.0] and seen["second"].tolist() == [5.0, 10.0]


# ---- buffers that existed before the capture and were written in it are restored -------
WRITES = {
    "add_": lambda kv, src: kv.add_(src),
    "copy_": lambda kv, src: kv.copy_(src),
    "out=": lambda kv, src: torch.mul(src, 2, out=kv),
    "through-a-view": lambda kv, src: kv[1:3].add_(src[1:3]),
    "index_put_": lambda kv, src: kv.index_put_((torch.tensor([0]),), src[:1]),
    "twice": lambda kv, src: (kv.add_(src), kv.add_(src)),
    "fill_": lambda kv, src: kv.fill_(9.0),
    "zero_": lambda kv, src: kv.zero_(),
}


@pytest.mark.parametrize("how", list(WRITES))
def test_a_buffer_written_in_capture_is_restored_to_its_value_before_the_capture(emu: EmulatedBackend, how: str) -> None:
    kv = emu.to_device(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    src = emu.to_device(torch.tensor([10.0, 20.0, 30.0, 40.0]))
    eager = kv.clone()
    WRITES[how](eager, src.clone())
    g, _ = capture(emu, lambda s: WRITES[how](kv, src))
    assert kv.tolist() == [1.0, 2.0, 3.0, 4.0] and src.tolist() == [10.0, 20.0, 30.0, 40.0]
    g.replay()
    assert kv.tolist() == eager.tolist()  # the replay does what the capture only recorded


def test_two_written_buffers_are_both_restored(emu: EmulatedBackend) -> None:
    k = emu.to_device(torch.tensor([1.0, 1.0]))
    v = emu.to_device(torch.tensor([2.0, 2.0]))
    g, _ = capture(emu, lambda s: (k.add_(5), v.mul_(3)))
    assert k.tolist() == [1.0, 1.0] and v.tolist() == [2.0, 2.0]
    g.replay()
    assert k.tolist() == [6.0, 6.0] and v.tolist() == [6.0, 6.0]


def test_a_buffer_written_in_each_piecewise_segment_is_restored_at_each_close(emu: EmulatedBackend) -> None:
    kv = emu.to_device(torch.tensor([1.0]))
    during_break = []

    def body(scope):
        kv.add_(1)
        scope.break_point(lambda: during_break.append(kv.item()))
        kv.mul_(10)

    g, _ = capture(emu, body, CaptureMode.PIECEWISE)
    assert during_break == [1.0]  # the first segment's write never really happened
    assert kv.tolist() == [1.0]
    g.replay()
    assert kv.tolist() == [20.0] and during_break == [1.0, 2.0]


def test_in_place_work_replays_every_time_from_the_current_contents(emu: EmulatedBackend) -> None:
    counter = emu.to_device(torch.tensor([0]))
    g, _ = capture(emu, lambda s: counter.add_(1))
    assert counter.item() == 0
    for n in range(1, 4):
        g.replay()
        assert counter.item() == n


def test_a_failed_capture_restores_what_it_wrote_and_poisons_what_it_made(emu: EmulatedBackend) -> None:
    kv = emu.to_device(torch.tensor([1.0, 2.0]))
    made = {}
    with pytest.raises(RuntimeError, match="body failed"):
        with GraphCaptureScope(emu, emu.default_queue(), BreakableGraph(emu)):
            kv.add_(100)
            made["y"] = kv * 2
            raise RuntimeError("body failed")
    assert kv.tolist() == [1.0, 2.0]
    assert torch.isnan(made["y"]).all()


def test_host_work_outside_any_capture_is_untouched(emu: EmulatedBackend) -> None:
    kv = emu.to_device(torch.tensor([1.0]))
    kv.add_(1)  # eager, no capture open: really runs
    y = kv * 2
    assert kv.tolist() == [2.0] and y.tolist() == [4.0]
