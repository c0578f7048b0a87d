"""A tensor a CUDA graph tree marked overwritten refuses the user's reads, never a capture's end or a replay.

A graph tree (``torch.compile(mode="reduce-overhead")``) marks an output whose memory a later recording or replay
reuses (``torch._C._set_storage_access_error_msg``, and
``_set_storage_data_ptr_access_error_msg`` on its storage): reading it in Python raises the tree's message. The graph's own
kernels write that memory on a GPU, where no Python check runs. The emulator's end of a capture writes the memory a
capture made (its recorded values are undone), and it refused there (found by ``scripts/graph_trees_probe.py``: a
tree's recording of a second path raised the tree's message out of ``capture_end``).
"""

from __future__ import annotations

import pytest
import torch

MESSAGE = "Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run."


def test_a_capture_ends_and_replays_with_a_marked_output_and_the_user_is_refused_its_read(torch_cuda: str) -> None:
    x = torch.ones(4, device="cuda")
    graph, side = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        graph.capture_begin()
        try:
            y = x * 2  # memory the capture made
            memory = y.untyped_storage()._cdata  # first: a marked tensor's storage is refused on a GPU
            torch._C._set_storage_access_error_msg(y, MESSAGE)  # the tensor, and its memory, as the tree marks them
            torch._C._set_storage_data_ptr_access_error_msg(memory, MESSAGE)
        finally:
            graph.capture_end()  # never a capture left open for the next test (global mode refuses its work)
    torch.cuda.current_stream().wait_stream(side)
    graph.replay()
    torch.cuda.synchronize()
    with pytest.raises(RuntimeError, match="accessing tensor output of CUDAGraphs that has been overwritten"):
        y.sum()
