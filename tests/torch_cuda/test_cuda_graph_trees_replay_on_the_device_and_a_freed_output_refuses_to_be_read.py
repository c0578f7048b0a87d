"""torch.compile's CUDA graph trees (``mode="reduce-overhead"``, ``backend="cudagraphs"``) record and replay on the
device, and an output the tree freed refuses to be read, in the tree's words, as on a GPU.

The tree manager reads 12 functions of a CUDA build's ``torch._C`` that a CPU-only torch lacks; they stand in on the
emulated device (``seam/torch_cuda/graph_trees.py``). The capture bug they make visible: holding a compiled
function's output across a later call. The recorded call's outputs are freed when the next call begins, and reading
one raises "Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run" (a clone made
before survives); a replay's output held across the next replay silently reads the next replay's values.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
import torch

OVERWRITTEN = "accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run"


@pytest.fixture
def compiled_twice(torch_cuda: str) -> Iterator[dict[str, Any]]:
    """A model whose weights require no grad (as engines' do), and its forward under both tree entry points."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).cuda()
    model.requires_grad_(False)
    yield {"model": model, "reduce-overhead": torch.compile(model, mode="reduce-overhead"),
           "cudagraphs": torch.compile(model, backend="cudagraphs")}
    torch._dynamo.reset()


@pytest.mark.parametrize("entry", ["reduce-overhead", "cudagraphs"])
def test_each_call_of_a_tree_gives_the_eager_values_on_the_device(compiled_twice: dict[str, Any], entry: str) -> None:
    with torch.inference_mode():
        for _ in range(5):  # a warm-up, a recording, then replays
            x = torch.randn(3, 8, device="cuda")
            out = compiled_twice[entry](x)
            assert out.device == torch.device("cuda", 0)
            assert torch.allclose(out.cpu(), compiled_twice["model"](x).cpu(), atol=1e-5)


@pytest.mark.parametrize("entry", ["reduce-overhead", "cudagraphs"])
def test_the_recording_calls_output_read_after_the_next_call_is_refused_and_its_clone_is_not(
        compiled_twice: dict[str, Any], entry: str) -> None:
    """The tree frees the outputs of the call it recorded once the next call starts (a new generation), and marks
    them: reading one raises; a clone made before holds the recorded call's values."""
    compiled = compiled_twice[entry]
    with torch.inference_mode():
        compiled(torch.randn(3, 8, device="cuda"))  # the warm-up
        x = torch.randn(3, 8, device="cuda")
        recorded = compiled(x)  # the recording
        kept = recorded.clone()
        compiled(torch.randn(3, 8, device="cuda"))  # the first replay
        assert recorded.shape == (3, 4) and recorded.dtype == torch.float32  # its metadata is still there
        with pytest.raises(RuntimeError, match=OVERWRITTEN):
            recorded.sum()
        with pytest.raises(RuntimeError, match=OVERWRITTEN):
            recorded.cpu()
        with pytest.raises(RuntimeError, match=OVERWRITTEN):  # a read with no tensor operation (torch's own C++)
            recorded.tolist()
        assert torch.allclose(kept.cpu(), compiled_twice["model"](x).cpu(), atol=1e-5)


@pytest.mark.parametrize("entry", ["reduce-overhead", "cudagraphs"])
def test_a_replays_output_held_across_the_next_replay_reads_that_replays_values(compiled_twice: dict[str, Any],
                                                                                entry: str) -> None:
    """A replay writes its outputs into the graph's memory again; the tree marks nothing then, so an output held
    across the next replay reads that replay's values (the overwrite the tree's message is about, unannounced)."""
    compiled = compiled_twice[entry]
    with torch.inference_mode():
        for _ in range(3):  # a warm-up, a recording, a replay
            compiled(torch.randn(3, 8, device="cuda"))
        first, second = torch.randn(3, 8, device="cuda"), torch.randn(3, 8, device="cuda")
        held = compiled(first)
        compiled(second)
        model = compiled_twice["model"]
        assert torch.allclose(held.cpu(), model(second).cpu(), atol=1e-5)
        assert not torch.allclose(held.cpu(), model(first).cpu(), atol=1e-3)


def test_the_trees_raw_free_of_a_device_storages_address_is_taken_and_an_unknown_address_refused() -> None:
    """A tree that records a second path frees the blocks of outputs that died (``raw_delete`` of their addresses);
    on the emulated device that frees nothing, and an address no storage has is refused as CUDA's allocator refuses it
    (emulated arm only: on a GPU freeing a live tensor's block is a double free)."""
    from seam.torch_cuda import emulate_cuda

    with emulate_cuda():
        block = torch.ones(64, device="cuda")
        torch._C._cuda_cudaCachingAllocator_raw_delete(block.untyped_storage().data_ptr())
        assert block.cpu().tolist() == [1.0] * 64
        with pytest.raises(RuntimeError, match="invalid device pointer"):
            torch._C._cuda_cudaCachingAllocator_raw_delete(8)
