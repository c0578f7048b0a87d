"""A CUDA graph tree's checkpoint of its private pool, on both arms: ``torch._C._cuda_getCheckpointState`` keeps the
caching allocator's allocated blocks of a pool, ``_cuda_setCheckpointPoolState`` puts them back (the storages named
get a deleter again, the others stay allocated until ``_cuda_cudaCachingAllocator_raw_delete`` frees them), and
``_free_And_Remove_DeleterFn`` frees a storage's block at once. CUDA graph trees
(``torch.compile(mode="reduce-overhead")``) call them whenever a node records a second child or a new generation
starts; PyTorch's ``TestBlockStateAbsorption`` calls them directly.

The emulated device kept no state (a checkpoint was empty, restoring one did nothing, the tree's frees freed
nothing), and answered the tree's own check of its pool yes whatever the pool held: a tree checking its pool after
every step (``slow_path_cudagraph_asserts``) raised "Detected N tensor(s) in the cudagraph pool not tracked as
outputs" where the GPU's passes; a tree of two paths and three sizes rebuilt an output over a storage too small for
it ("Trying to resize storage that is not resizable") at its tenth step, and, once that was mended, read another
node's output at its fourteenth (a recording took a free storage at another address)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Callable, Iterator

import pytest
import torch

from tests.torch_cuda.side_capture import captured
from tests.torch_cuda.tree_functions import eager_functions

#: A restore refused for a block freed since that is not passed stale, in a child (its live tensors' deaths abort a
#: GPU's process, "invalid device pointer": it leaves at once, having said the refusal and the pool after it).
REFUSED = """
import os, torch
from tests.torch_cuda.side_capture import captured
def take():
    return torch.ones(512, device="cuda", dtype=torch.uint8)
first = torch.cuda.CUDAGraph()
kept = captured(first, take)
pool, device = first.pool(), torch.cuda.current_device()
state = torch._C._cuda_getCheckpointState(device, pool)
later = torch.cuda.CUDAGraph()
since = captured(later, take, pool=pool)
try:
    torch._C._cuda_setCheckpointPoolState(device, state, [], [])
    print("accepted")
except RuntimeError as e:
    print(str(e).splitlines()[0])
print([[(b["size"], b["state"]) for b in s["blocks"]] for s in torch.cuda.memory_snapshot()
       if tuple(s["segment_pool_id"]) == tuple(pool)], flush=True)
os._exit(0)
"""

SMALL, LARGE = 2 * 1024 * 1024, 20 * 1024 * 1024


def _bytes(n: int) -> torch.Tensor:
    return torch.ones(n, device="cuda", dtype=torch.uint8)


def _segments(pool: Any) -> list[tuple[int, int, list[tuple[int, str]]]]:
    """The pool's segments: address, size, and each block's size and state."""
    return [(s["address"], s["total_size"], [(b["size"], b["state"]) for b in s["blocks"]])
            for s in torch.cuda.memory_snapshot() if tuple(s["segment_pool_id"]) == tuple(pool)]


def _live_blocks(pool: Any) -> int:
    return sum(state == "active_allocated" for _, _, blocks in _segments(pool) for _, state in blocks)


def _cdata(tensors: Any) -> list[int]:
    return [t.untyped_storage()._cdata for t in tensors]


def _rebuilt(t: torch.Tensor) -> torch.Tensor:
    """A tensor over ``t``'s memory rebuilt from its address, as a graph tree rebuilds a replay's outputs."""
    storage = torch._C._construct_storage_from_data_pointer(t.untyped_storage().data_ptr(), t.device,
                                                            t.untyped_storage().nbytes())
    return torch.empty(0, device=t.device, dtype=t.dtype).set_(storage, t.storage_offset(), t.size(), t.stride())


def test_a_restored_checkpoint_holds_the_blocks_of_outputs_that_died_until_raw_delete_frees_them(
        torch_cuda: str) -> None:
    graph = torch.cuda.CUDAGraph()
    outputs = captured(graph, lambda: (_bytes(512), _bytes(512)))
    pool, device = graph.pool(), torch.cuda.current_device()
    state = torch._C._cuda_getCheckpointState(device, pool)
    addresses = [o.data_ptr() for o in outputs]
    del outputs
    seen = [_live_blocks(pool)]
    torch._C._cuda_setCheckpointPoolState(device, state, [], [])
    seen.append(_live_blocks(pool))
    for address in addresses:
        torch._C._cuda_cudaCachingAllocator_raw_delete(address)
        seen.append(_live_blocks(pool))
    assert seen == [0, 2, 1, 0]


def test_storages_given_deleters_free_their_blocks_at_death_and_the_others_wait_for_raw_delete(
        torch_cuda: str) -> None:
    one = torch.ones(1, device="cuda", dtype=torch.uint8)
    graph = torch.cuda.CUDAGraph()
    outputs = captured(graph, lambda: tuple(_bytes(n) + one for n in (SMALL, SMALL, LARGE)))
    pool, device = graph.pool(), torch.cuda.current_device()
    graph.replay()
    state = torch._C._cuda_getCheckpointState(device, pool)
    last_address = outputs[2].data_ptr()
    rebuilt = [_rebuilt(o) for o in outputs]
    seen: list[Any] = [_live_blocks(pool)]
    del outputs
    seen.append(_live_blocks(pool))
    one.add_(1)
    graph.replay()  # the rebuilt tensors read the graph's memory
    seen.append([int(t.float().mean()) for t in rebuilt])
    seen.append([torch._C._has_Standard_Deleter(c) for c in _cdata(rebuilt)])
    torch._C._cuda_setCheckpointPoolState(device, state, [], _cdata(rebuilt[:2]))
    seen.append([torch._C._has_Standard_Deleter(c) for c in _cdata(rebuilt)])
    seen.append(_live_blocks(pool))
    for i in range(3):
        rebuilt[i] = None  # type: ignore[call-overload]
        seen.append(_live_blocks(pool))
    torch._C._cuda_cudaCachingAllocator_raw_delete(last_address)
    seen.append(_live_blocks(pool))
    assert seen == [3, 0, [3, 3, 3], [False, False, False], [True, True, False], 3, 2, 1, 1, 0]


def test_a_checkpoint_restored_while_its_outputs_live_leaves_the_pools_segments_as_they_were(torch_cuda: str) -> None:
    def body() -> tuple[torch.Tensor, ...]:
        small = [_bytes(512) for _ in range(11)]
        x = _bytes(SMALL * 4) + 1
        return small[5], small[8], small[9], x

    graph = torch.cuda.CUDAGraph()
    outputs = captured(graph, body)
    pool, device = graph.pool(), torch.cuda.current_device()
    before = _segments(pool)
    torch._C._cuda_setCheckpointPoolState(device, torch._C._cuda_getCheckpointState(device, pool), [], [])
    after = _segments(pool)
    del outputs
    assert (after, _live_blocks(pool)) == (before, 0)
    assert [state for _, _, blocks in before for _, state in blocks].count("active_allocated") == 4


def test_a_block_allocated_since_the_checkpoint_is_freed_when_its_storage_is_passed_stale(torch_cuda: str) -> None:
    graph = torch.cuda.CUDAGraph()
    outputs = captured(graph, lambda: (_bytes(512),))
    pool, device = graph.pool(), torch.cuda.current_device()
    before = _segments(pool)
    state = torch._C._cuda_getCheckpointState(device, pool)
    later = torch.cuda.CUDAGraph()
    since = captured(later, lambda: (_bytes(512),), pool=pool)
    # (not passing it is refused: ``test_a_restore_that_frees_a_block_not_passed_stale_is_refused...``)
    torch._C._cuda_setCheckpointPoolState(device, state, _cdata(since), [])
    restored = _live_blocks(pool)  # the later block went back at the restore, while its tensor lives
    del since  # its death frees nothing more
    assert restored == 1
    after = _segments(pool)  # the later capture's side stream took a segment of its own: wholly free now
    assert (after[:len(before)], _live_blocks(pool)) == (before, 1)
    assert [blocks for _, _, blocks in after[len(before):]] == [[(size, "inactive")] for _, size, _ in after[len(before):]]
    del outputs
    assert _live_blocks(pool) == 0


def test_a_restore_that_frees_a_block_not_passed_stale_is_refused_and_leaves_the_pool_wholly_free(
        torch_cuda: str) -> None:
    done = subprocess.run([sys.executable, "-c", REFUSED], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Any stale tensors which are being manually freed must be passed to set checkpoint",
        "[[(2097152, 'inactive')], [(2097152, 'inactive')]]"]


def test_free_and_remove_deleter_frees_the_block_at_once_and_the_storage_no_more(torch_cuda: str) -> None:
    graph = torch.cuda.CUDAGraph()
    outputs = captured(graph, lambda: (_bytes(512), _bytes(512)))
    pool = graph.pool()
    storage = _cdata(outputs[:1])[0]
    seen: list[Any] = [_live_blocks(pool), torch._C._has_Standard_Deleter(storage)]
    torch._C._free_And_Remove_DeleterFn(storage)
    seen += [_live_blocks(pool), torch._C._has_Standard_Deleter(storage)]
    first = outputs[0]
    outputs = outputs[1:]
    del first  # its storage frees nothing: its block is free already
    seen.append(_live_blocks(pool))
    del outputs
    seen.append(_live_blocks(pool))
    assert seen == [2, True, 1, False, 1, 0]


@pytest.fixture
def checked_tree(torch_cuda: str) -> Iterator[tuple[Callable[..., Any], ...]]:
    """Three eager functions and their trees, the tree checking its pool against the caching allocator after every
    step."""
    torch._dynamo.reset()
    eager = eager_functions()
    with torch._inductor.config.patch({"triton.slow_path_cudagraph_asserts": True}):
        yield eager + tuple(torch.compile(f, mode="reduce-overhead") for f in eager)
    torch._dynamo.reset()


def test_a_tree_checking_its_pool_at_every_step_gives_each_paths_values(
        checked_tree: tuple[Callable[..., Any], ...]) -> None:
    f1, f2, f3, c1, c2, c3 = checked_tree
    right = []
    with torch.inference_mode():
        for step in range(20):
            torch.compiler.cudagraph_mark_step_begin()
            x = torch.randn(4 + step % 3, 8, device="cuda")
            second, eager_second = (c2, f2) if step % 2 == 0 else (c3, f3)
            right.append(bool(torch.allclose(second(c1(x)).cpu(), eager_second(f1(x)).cpu(), atol=1e-4)))
    assert right == [True] * 20
