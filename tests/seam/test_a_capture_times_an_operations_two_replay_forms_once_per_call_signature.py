"""A capture times an operation's two replay forms once per call signature, and a long call once.

At capture the emulator chooses how a functional operation replays: as is (a fresh result copied into
the captured output) or through its ``out=`` overload (written in place): some CPU ``out`` kernels are
slower than their functional twin, so both forms are timed, and the faster becomes the plan. Timing runs
the operation: a warm-up and seven samples of each form, sixteen calls. A model's layers repeat their
calls (the same operation on the same shapes), and CUDA-graph code captures the same body again and
again (one graph per batch size): the decision is kept per call signature, so a repeat is not timed. And
a call that takes a millisecond or more is timed once after its warm-up (in half precision a large
matmul takes seconds on a CPU: PyTorch's ``test_graph_make_graphed_callables`` spent most of its run
timing them). Either form writes the same values, so the replayed values are checked too.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import torch

from seam import EmulatedBackend, emulator

from .conftest import capture_full


@pytest.fixture
def timings(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Each op ``_cost`` timed, in order; the table of decisions starts empty."""
    timed: list[Any] = []
    real = emulator._cost

    def counting(op: Any, *args: Any, **kwargs: Any) -> int:
        timed.append(op.func)
        return real(op, *args, **kwargs)

    monkeypatch.setattr(emulator, "_cost", counting)
    monkeypatch.setattr(emulator, "_FASTER", {}, raising=False)  # (raising: the red run had none)
    return timed


def test_ten_layers_of_one_shape_are_timed_once_and_replay_each_layers_values(emu: EmulatedBackend,
                                                                              timings: list[Any]) -> None:
    xs = [emu.to_device(torch.full((4, 8), float(i))) for i in range(10)]
    g, outs = capture_full(emu, lambda: [torch.nn.functional.gelu(x) for x in xs])
    assert len(timings) == 2  # the out= form and the functional form, for the first layer alone
    g.replay()
    for i, out in enumerate(outs):
        assert torch.equal(out, torch.nn.functional.gelu(torch.full((4, 8), float(i))))


def test_another_shape_is_timed_again(emu: EmulatedBackend, timings: list[Any]) -> None:
    a, b = emu.to_device(torch.ones(4, 8)), emu.to_device(torch.ones(5, 8))
    capture_full(emu, lambda: (torch.nn.functional.gelu(a), torch.nn.functional.gelu(b)))
    assert len(timings) == 4


def test_a_second_capture_of_the_same_body_is_not_timed_again(emu: EmulatedBackend, timings: list[Any]) -> None:
    x = emu.to_device(torch.ones(4, 8))
    capture_full(emu, lambda: torch.nn.functional.gelu(x))
    capture_full(emu, lambda: torch.nn.functional.gelu(x))
    assert len(timings) == 2


class _Sleeper:
    """A recorded operation that takes ``seconds`` a call, counting its calls."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.calls = seconds, 0

    def run(self) -> None:
        self.calls += 1
        time.sleep(self.seconds)


def test_a_long_call_is_timed_once_after_its_warm_up_and_a_short_one_seven_times(
        monkeypatch: pytest.MonkeyPatch) -> None:
    long = _Sleeper(0.002)  # 2 ms: long by the emulator's measure (1 ms), whatever the machine's load
    emulator._cost(long)  # type: ignore[arg-type]
    monkeypatch.setattr(emulator, "_LONG_NS", 10**12)  # nothing is long now: a loaded machine's pause is not either
    short = _Sleeper(0.0)
    emulator._cost(short)  # type: ignore[arg-type]
    assert (long.calls, short.calls) == (2, 8)
