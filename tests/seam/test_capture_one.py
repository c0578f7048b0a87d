"""``capture_one``: warmup -> hook ... final hook < synchronize < barrier < graph construction < capture."""

from __future__ import annotations

import json
import os
import socket
import sys

import pytest
import torch

from harness.zygote import start_python
from seam import Backend, BreakableGraph, CaptureMode, capture_one, is_capturing

from .conftest import ROOT


def _recorded_capture(backend: Backend, warmups: int = 2):
    events: list[str] = []
    x = backend.alloc((3,))

    def forward() -> torch.Tensor:
        events.append("forward-captured" if backend.capturing else "forward-warmup")
        return x * 2

    original_sync = backend.synchronize

    def sync() -> None:
        events.append("synchronize")
        original_sync()

    backend.synchronize = sync  # type: ignore[method-assign]

    def factory() -> BreakableGraph:
        events.append("graph-construct")
        return BreakableGraph(backend, CaptureMode.FULL)

    done = capture_one(
        forward,
        backend=backend,
        graph=factory,
        warmups=warmups,
        post_warmup_hook=lambda: events.append("hook"),
        barrier=lambda: events.append("barrier"),
    )
    return events, done, x


def test_the_final_hook_precedes_synchronize_which_precedes_the_barrier_and_graph_construction(backend: Backend) -> None:
    events, _, _ = _recorded_capture(backend)
    last_hook = max(i for i, e in enumerate(events) if e == "hook")
    assert last_hook < events.index("synchronize") < events.index("barrier") < events.index("graph-construct")
    assert events.index("graph-construct") < events.index("forward-captured")


def test_two_warmup_forwards_then_exactly_one_captured_forward_with_the_hook_after_warmups_only(backend: Backend) -> None:
    events, done, x = _recorded_capture(backend)
    assert events == [
        "forward-warmup", "hook", "forward-warmup", "hook",
        "synchronize", "barrier", "graph-construct", "forward-captured",
    ]
    assert not done.inert and done.graph.captured
    x.copy_(torch.tensor([1.0, 2.0, 3.0]))
    done.graph.replay()
    assert torch.equal(done.output.cpu(), torch.tensor([2.0, 4.0, 6.0]))


def test_is_capturing_is_true_during_warmups_and_false_after(backend: Backend) -> None:
    seen: list[bool] = []
    capture_one(lambda: seen.append(is_capturing()), backend=backend, graph=CaptureMode.FULL)
    assert seen == [True, True, True] and not is_capturing()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank(rank: int, port: int) -> list[str]:  # runs in a child: one rank of two
    import torch.distributed as dist

    from seam import EmulatedBackend

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        backend = EmulatedBackend()
        order: list[str] = []
        group = dist.new_group([0, 1], backend="gloo")
        real_barrier = dist.barrier

        def traced_barrier(*args, **kwargs):
            order.append("barrier")
            return real_barrier(*args, **kwargs)

        dist.barrier = traced_barrier
        x = backend.alloc((2,))
        done = capture_one(lambda: x + rank, backend=backend, graph=CaptureMode.FULL,
                           post_warmup_hook=lambda: order.append("hook"), barrier=group)
        order.append("captured" if done.graph.captured else "not-captured")
        return order
    finally:
        dist.destroy_process_group()


RANK = """
import json, sys
from tests.seam.test_capture_one import _rank
print(json.dumps(_rank(int(sys.argv[1]), int(sys.argv[2]))))
"""


@pytest.mark.slow
def test_capture_one_meets_a_real_gloo_barrier_across_two_processes() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("gloo over TCP loopback is tested on Linux")
    port = _free_port()
    # Two interpreters (in a seamgate run, forked from its zygote with torch loaded: harness/zygote.py).
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ranks = [start_python(["-c", RANK, str(r), str(port)], env=env, cwd=ROOT) for r in range(2)]
    done = [rank.communicate(timeout=120) for rank in ranks]
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]
    assert [json.loads(d.stdout.strip().splitlines()[-1]) for d in done] == [["hook", "hook", "barrier", "captured"]] * 2
