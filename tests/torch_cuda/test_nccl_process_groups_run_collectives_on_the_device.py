"""``torch.distributed`` with NCCL on the device, on both arms: engines start an NCCL group even on one GPU and put its
collectives in their CUDA graphs. Emulated, a CPU-only torch said "Distributed package doesn't have NCCL built in"
(``seam/torch_cuda/nccl.py`` and ``collectives.py`` since session 36). One rank per process on both arms (a GPU
machine of one device runs one NCCL rank); the emulated arm also runs two ranks in two processes, where Gloo carries
NCCL's collectives between them.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest
import torch

from seam.torch_cuda import emulate_cuda
from tests.torch_cuda.side_capture import refused_at_its_end, warmed_and_captured

dist = pytest.importorskip("torch.distributed")
if not dist.is_available():
    pytest.skip("this torch has no torch.distributed", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def _world() -> Iterator[Any]:
    """``torch.distributed`` with a default group of one rank over NCCL, destroyed on the way out (made in the case's
    body, not a fixture: a refused ``init_process_group`` is the case's red, not an error of its set-up)."""
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield dist
    finally:
        dist.destroy_process_group()


def test_a_group_of_one_rank_says_nccl_and_its_device_backend_is_ncccls(torch_cuda: str) -> None:
    with _world() as world:
        group = world.group.WORLD
        assert world.is_nccl_available()
        assert world.get_backend() == world.Backend.NCCL
        assert type(group._get_backend(torch.device("cuda"))).__name__ == "ProcessGroupNCCL"
        assert isinstance(torch.cuda.nccl.version(), tuple) and torch.cuda.nccl.version()[0] == 2


def test_collectives_of_one_rank_give_their_inputs_on_the_device(torch_cuda: str) -> None:
    with _world() as world:
        values = {}
        for op in ("SUM", "AVG", "MAX", "PRODUCT"):
            x = torch.arange(1.0, 5.0, device="cuda")
            world.all_reduce(x, op=getattr(world.ReduceOp, op))
            values[op] = x.tolist()
        assert values == dict.fromkeys(("SUM", "AVG", "MAX", "PRODUCT"), [1.0, 2.0, 3.0, 4.0])
        x = torch.arange(4.0, device="cuda")
        gathered = torch.empty(4, device="cuda")
        world.all_gather_into_tensor(gathered, x * 2)
        scattered = torch.empty(4, device="cuda")
        world.reduce_scatter_tensor(scattered, x + 1)
        exchanged = torch.empty(4, device="cuda")
        world.all_to_all_single(exchanged, x - 1)
        world.barrier()
        assert (gathered.tolist(), scattered.tolist(), exchanged.tolist()) == (
            [0.0, 2.0, 4.0, 6.0], [1.0, 2.0, 3.0, 4.0], [-1.0, 0.0, 1.0, 2.0])
        assert gathered.device == torch.device("cuda", 0)


def test_a_host_tensor_is_refused_by_an_nccl_group_and_taken_by_a_mixed_one(torch_cuda: str) -> None:
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    try:
        with pytest.raises(RuntimeError, match="No backend type associated with device type cpu"):
            dist.all_reduce(torch.ones(2))
    finally:
        dist.destroy_process_group()
    dist.init_process_group("cpu:gloo,cuda:nccl", store=dist.HashStore(), rank=0, world_size=1)
    try:
        host, device = torch.ones(2), torch.ones(2, device="cuda")
        dist.all_reduce(host)
        dist.all_reduce(device)
        assert (host.tolist(), device.tolist()) == ([1.0, 1.0], [1.0, 1.0])
    finally:
        dist.destroy_process_group()


def test_a_collective_captured_in_a_graph_runs_again_at_every_replay(torch_cuda: str) -> None:
    with _world() as world:
        x = torch.ones(4, device="cuda")
        out = torch.zeros(4, device="cuda")
        box = {}

        def body() -> None:
            world.all_gather_into_tensor(out, x * 2)  # writes ``out`` from ``x``: a replay that skips it leaves ``out``
            y = out + 1
            world.all_reduce(y)
            box["y"] = y

        graph = warmed_and_captured(body)
        for value in (3.0, 5.0):
            x.fill_(value)
            graph.replay()
            torch.cuda.synchronize()
            assert out.tolist() == [2 * value] * 4
            assert box["y"].tolist() == [2 * value + 1] * 4


def test_a_functional_collective_captured_in_a_graph_runs_again(torch_cuda: str) -> None:
    with _world() as world:
        import torch.distributed._functional_collectives as funcol

        x = torch.ones(3, device="cuda")
        box = {}

        def body() -> None:
            box["y"] = funcol.all_gather_tensor(x * 3, 0, world.group.WORLD) + 0

        graph = warmed_and_captured(body)
        x.fill_(2.0)
        graph.replay()
        torch.cuda.synchronize()
        assert box["y"].tolist() == [6.0, 6.0, 6.0]


def test_a_one_rank_collective_in_place_is_no_work_for_a_capture(torch_cuda: str) -> None:
    # NCCL's one-rank path launches nothing for a collective in place: the H100's capture of one is empty
    with _world() as world:
        x = torch.arange(4.0, device="cuda")
        world.all_reduce(x)  # the communicator is made
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with pytest.warns(UserWarning, match="The CUDA Graph is empty"):
            with torch.cuda.graph(graph):
                world.all_reduce(x)
                world.broadcast(x, 0)
        assert x.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_a_groups_first_collective_inside_a_capture_is_refused(torch_cuda: str) -> None:
    # NCCL makes the group's communicator at its first collective, which CUDA refuses inside a capture (H100)
    with _world() as world:
        x = torch.ones(4, device="cuda")
        refused_at_its_end(lambda: world.all_reduce(x))


def test_a_barrier_inside_a_capture_is_refused(torch_cuda: str) -> None:
    with _world() as world:
        world.all_reduce(torch.ones(1, device="cuda"))  # the communicator is made
        refused_at_its_end(world.barrier)


def test_a_gloo_groups_collective_of_device_tensors_inside_a_capture_is_refused(torch_cuda: str) -> None:
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        x = torch.arange(3.0, device="cuda")
        dist.all_reduce(x)  # eagerly Gloo takes device tensors
        assert x.tolist() == [0.0, 1.0, 2.0]
        refused_at_its_end(lambda: dist.all_reduce(x))
    finally:
        dist.destroy_process_group()


def test_a_group_bound_to_the_device_makes_its_communicator_at_once(torch_cuda: str) -> None:
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1, device_id=torch.device("cuda", 0))
    try:
        x = torch.ones(4, device="cuda")
        graph = warmed_and_captured(lambda: dist.all_reduce(x))
        x.fill_(2.0)
        graph.replay()
        torch.cuda.synchronize()
        assert x.tolist() == [2.0] * 4
    finally:
        dist.destroy_process_group()


def test_the_backends_of_destroyed_groups_are_let_go() -> None:
    from seam.torch_cuda import nccl

    with emulate_cuda():
        for _ in range(3):  # a suite's cases, each making and destroying its group: Gloo's threads not kept for each
            with _world() as world:
                world.all_reduce(torch.ones(1, device="cuda"))
                held = len(nccl._MADE)
        assert held == 1


def test_a_released_graph_lets_its_collectives_and_their_tensors_go() -> None:
    import gc

    from seam.torch_cuda import collectives

    with emulate_cuda(), _world() as world:
        world.all_reduce(torch.ones(1, device="cuda"))  # the communicator is made
        x, out = torch.ones(4, device="cuda"), torch.empty(4, device="cuda")
        before = set(collectives._CALLS)  # (an earlier case's graph may live on: a failed case's traceback holds it)
        # not in place: on one rank NCCL launches nothing for an all-reduce in place, and a capture records nothing
        graph = warmed_and_captured(lambda: world.all_gather_into_tensor(out, x))
        held = set(collectives._CALLS) - before
        tensors = [leaf for number in held for leaf in collectives._CALLS[number].leaves if isinstance(leaf, torch.Tensor)]
        del graph, x, out
        gc.collect()
        assert (len(held), held & set(collectives._CALLS), tensors) == (1, set(), [])


def test_leaving_the_emulation_takes_nccl_away_again() -> None:
    before = (dist.is_nccl_available(), hasattr(dist, "ProcessGroupNCCL"))
    with emulate_cuda():
        assert dist.is_nccl_available() and hasattr(dist, "ProcessGroupNCCL")
    assert (dist.is_nccl_available(), hasattr(dist, "ProcessGroupNCCL")) == before


RANK = r'''
import sys, torch, torch.distributed as dist
from seam.torch_cuda import emulate_cuda
rank, path = int(sys.argv[1]), sys.argv[2]
with emulate_cuda():
    dist.init_process_group("nccl", init_method=f"file://{path}", rank=rank, world_size=2)
    x = torch.full((3,), float(rank + 1), device="cuda")
    dist.all_reduce(x)
    mean = torch.full((2,), float(rank), device="cuda")
    dist.all_reduce(mean, op=dist.ReduceOp.AVG)
    gathered = torch.empty(4, device="cuda")
    dist.all_gather_into_tensor(gathered, torch.full((2,), float(rank), device="cuda"))
    inp = torch.full((2,), float(rank + 1), device="cuda")
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = inp * 10; dist.all_reduce(y)
    torch.cuda.current_stream().wait_stream(s); torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = inp * 10
        dist.all_reduce(y)
    inp.fill_(rank + 2)
    g.replay(); torch.cuda.synchronize()
    print(x.tolist(), mean.tolist(), gathered.tolist(), y.tolist(), x.device, flush=True)
    dist.destroy_process_group()
import os
os._exit(0)  # OWED: Gloo's threads may abort the interpreter's own exit ("terminate called without an active exception")
'''


def test_two_emulated_ranks_in_two_processes_reduce_each_others_values_eagerly_and_in_a_replay() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
    with tempfile.TemporaryDirectory() as scratch:
        store = Path(scratch) / "store"
        ranks = [subprocess.Popen([sys.executable, "-c", RANK, str(rank), str(store)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env) for rank in (0, 1)]
        outputs = [rank.communicate(timeout=300) for rank in ranks]
    for (out, err), rank in zip(outputs, ranks):
        assert rank.returncode == 0, err[-2000:]
        # sums of 1 and 2; the mean of 0 and 1; rank 0's then rank 1's; the replay's (2 + 3) * 10
        assert out.strip() == "[3.0, 3.0, 3.0] [0.5, 0.5] [0.0, 0.0, 1.0, 1.0] [50.0, 50.0] cuda:0"
